// A team's upstreams, `/dashboard/teams/<team>/upstreams`: each configured server's state from the probe made for
// this page, its calls of the last AUDIT_WINDOW_HOURS from the audit trail (counts by outcome, latency p50/p95, the
// last failure), its tools and when the team last read them, its OAuth accounts; and the Reload button (a CSRF-checked
// POST, the admin API's reload). Fault kinds only, never an error's text: a text may quote what an upstream said.
import { PROBE_DEADLINE_MS, type ProbeFault, type ProbeResult } from "../../session/upstream-probe.ts";
import { CSRF_FIELD } from "./csrf.ts";
import { Layout } from "./layout.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";
import { AUDIT_WINDOW_HOURS, type TeamUpstreams, type UpstreamFigures } from "./upstream-figures.ts";

const when = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC";

function faultText(fault: ProbeFault): string {
  if (fault.status !== undefined) return `${fault.kind} ${fault.status}`;
  if (fault.ms !== undefined) return `${fault.kind} (${fault.ms} ms)`;
  return fault.kind;
}

function stateText(probe: ProbeResult): string {
  if (probe.state === "connected") return `connected (${probe.ms} ms to connect and list)`;
  if (probe.state === "failing") return `failing: ${faultText(probe.fault)}`;
  return "lazy, not loaded (not probed: a session connects it when the agent loads it)";
}

function Figure({ name, label, children }: { name: string; label: string; children: unknown }) {
  return (
    <div class="total">
      <dt>{label}</dt>
      <dd data-figure={name}>{children}</dd>
    </div>
  );
}

function Server({ s }: { s: UpstreamFigures }) {
  const calls = s.calls;
  const tools = s.probe.state === "connected" ? s.probe.tools : s.reading?.catalog?.tools.length;
  const outcomes = calls ? Object.entries(calls.outcomes).sort(([a], [b]) => (a < b ? -1 : 1)) : [];
  return (
    <section class="server" data-server={s.server} aria-labelledby={`server-${s.server}`}>
      <h3 id={`server-${s.server}`}>
        <code>{s.server}</code>
      </h3>
      <dl class="figures">
        <Figure name="state" label="State (probe)">
          <span data-state={s.probe.state}>{stateText(s.probe)}</span>
        </Figure>
        <Figure name="tools" label="Tools">
          {tools === undefined ? "–" : String(tools)}
        </Figure>
        <Figure name="catalog-age" label="Catalog read (team cache)">
          {s.reading?.catalog ? when(s.reading.checkedAt) : "not yet"}
        </Figure>
        <Figure name="calls" label={`Calls (${AUDIT_WINDOW_HOURS} h)`}>
          {String(calls?.calls ?? 0)}
        </Figure>
        <Figure name="outcomes" label="Outcomes">
          {outcomes.length === 0 ? "–" : outcomes.map(([o, n]) => `${o} ${n}`).join(", ")}
        </Figure>
        <Figure name="latency" label="Latency p50 / p95">
          {calls ? `${calls.p50} / ${calls.p95} ms` : "–"}
        </Figure>
        <Figure name="last-error" label="Last failed call">
          {calls?.lastError ? `${calls.lastError.outcome}, ${when(calls.lastError.at)}` : "none"}
        </Figure>
        {s.oauth === undefined ? null : (
          <Figure name="accounts" label={`OAuth accounts (${s.oauth})`}>
            {s.accounts.length === 0
              ? "none connected"
              : s.accounts.map((a) => `${a.account}${a.expiresAt ? `, expires ${when(a.expiresAt)}` : ""}${a.refreshable ? ", refreshable" : ""}`).join("; ")}
          </Figure>
        )}
      </dl>
    </section>
  );
}

export function UpstreamsPage({ upstreams, scope, reloaded }: { upstreams: TeamUpstreams; scope: TeamScope; reloaded: number | undefined }) {
  const team = upstreams.team;
  return (
    <Layout title={`Team ${team}: upstreams`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="upstreams" />
      {reloaded === undefined ? null : (
        <p role="status" class="notice">{`Reload sent: ${reloaded} live session${reloaded === 1 ? "" : "s"} take the current config at their next request.`}</p>
      )}
      <form method="post" action={`${scope.base}/reload`} class="reload">
        <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
        <button type="submit">Reload</button>
        <span class="hint">Every live session of the team takes the current config and reconnects its servers.</span>
      </form>
      {upstreams.ok ? (
        upstreams.servers.length === 0 ? (
          <p>The team's config has no servers.</p>
        ) : (
          <section aria-labelledby="servers-heading">
            <h2 id="servers-heading">Servers</h2>
            <p class="hint">{`States come from a probe made for this page (connect and tools/list, at most ${PROBE_DEADLINE_MS / 1000} s each); calls from the audit trail of the last ${AUDIT_WINDOW_HOURS} hours.`}</p>
            {upstreams.servers.map((s) => (
              <Server s={s} />
            ))}
          </section>
        )
      ) : (
        <p class="error" role="alert">
          {`The team's stored config no longer validates (${upstreams.errors} problem${upstreams.errors === 1 ? "" : "s"}): nothing was probed. `}
          <code>npm run team -- check</code> says what is wrong; <code>GET /admin/teams/&lt;team&gt;/config</code> gives the config.
        </p>
      )}
    </Layout>
  );
}
