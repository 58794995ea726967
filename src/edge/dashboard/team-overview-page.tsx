// A team's overview, `/dashboard/teams/<team>`: the last OVERVIEW_DAYS days of sessions, tool calls and errors, and the
// context the catalog saved (what direct exposure would have cost against what was sent), as charts, totals and a
// table of the active days; and the tools called most. The usage ledger gives sessions, calls and tokens (the usage
// API's figures); the audit trail gives errors and the tools.
import { DayChart } from "./day-chart.tsx";
import { Layout } from "./layout.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";
import { OVERVIEW_DAYS, type OverviewDay, type TeamOverview } from "./team-figures.ts";

const number = (n: number) => n.toLocaleString("en-US");

/** One total: its words, and its figure (also as `data-total`, which tests read). */
function Total({ name, label, value }: { name: string; label: string; value: number | string }) {
  return (
    <div class="total">
      <dt>{label}</dt>
      <dd data-total={name}>{typeof value === "number" ? number(value) : value}</dd>
    </div>
  );
}

function Totals({ overview }: { overview: TeamOverview }) {
  const totals = overview.usage.totals;
  const errors = overview.audit.days.reduce((sum, d) => sum + d.errors, 0);
  return (
    <dl class="totals">
      <Total name="sessions" label="Sessions" value={totals.sessions} />
      <Total name="calls" label="Tool calls" value={totals.calls.tools} />
      <Total name="errors" label="Calls that failed" value={errors} />
      <Total name="direct" label="Tokens direct exposure would have cost" value={totals.direct} />
      <Total name="sent" label="Tokens sent" value={totals.sent} />
      <Total name="saved" label="Tokens saved" value={totals.saved} />
      <Total name="ratio" label="Sent per direct token" value={totals.ratio === null ? "–" : totals.ratio.toFixed(4)} />
    </dl>
  );
}

function ActiveDays({ days }: { days: OverviewDay[] }) {
  const active = days.filter((d) => d.sessions || d.calls || d.errors || d.direct || d.sent).reverse();
  if (active.length === 0) return <p>No sessions or calls in this window yet.</p>;
  return (
    <table class="days">
      <caption>Days with activity, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Day (UTC)</th>
          <th scope="col" class="num">Sessions</th>
          <th scope="col" class="num">Calls</th>
          <th scope="col" class="num">Failed</th>
          <th scope="col" class="num">Direct tokens</th>
          <th scope="col" class="num">Sent tokens</th>
          <th scope="col" class="num">Saved</th>
        </tr>
      </thead>
      <tbody>
        {active.map((d) => (
          <tr data-day={d.day}>
            <th scope="row">{d.day}</th>
            <td class="num">{number(d.sessions)}</td>
            <td class="num">{number(d.calls)}</td>
            <td class="num">{number(d.errors)}</td>
            <td class="num">{number(d.direct)}</td>
            <td class="num">{number(d.sent)}</td>
            <td class="num">{number(d.direct - d.sent)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function TopTools({ tools }: { tools: TeamOverview["audit"]["tools"] }) {
  if (tools.length === 0) return <p>No tool calls in the audit trail of this window.</p>;
  return (
    <table class="tools">
      <caption>{`The tools called most (audit trail, last ${OVERVIEW_DAYS} days)`}</caption>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col" class="num">Calls</th>
          <th scope="col" class="num">Failed</th>
        </tr>
      </thead>
      <tbody>
        {tools.map((t) => (
          <tr data-tool={t.tool}>
            <th scope="row">
              <code>{t.tool}</code>
            </th>
            <td class="num">{number(t.calls)}</td>
            <td class="num">{number(t.errors)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function TeamOverviewPage({ overview, scope }: { overview: TeamOverview; scope: TeamScope }) {
  const days = overview.days.map((d) => d.day);
  const values = (pick: (d: OverviewDay) => number) => overview.days.map(pick);
  return (
    <Layout title={`Team ${overview.team}`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="overview" />
      <p>{`The last ${OVERVIEW_DAYS} days (UTC), as the usage API and the audit trail report them.`}</p>
      <section aria-labelledby="totals-heading">
        <h2 id="totals-heading">Totals</h2>
        <Totals overview={overview} />
      </section>
      <section aria-labelledby="activity-heading">
        <h2 id="activity-heading">Sessions, calls and failures per day</h2>
        <DayChart
          id="activity-chart"
          label={`Sessions, tool calls and failed calls per day, the last ${OVERVIEW_DAYS} days`}
          days={days}
          series={[
            { name: "sessions", className: "s-sessions", values: values((d) => d.sessions) },
            { name: "calls", className: "s-calls", values: values((d) => d.calls) },
            { name: "failed", className: "s-errors", values: values((d) => d.errors) },
          ]}
        />
      </section>
      <section aria-labelledby="context-heading">
        <h2 id="context-heading">Context saved per day</h2>
        <DayChart
          id="context-chart"
          label={`Tokens direct exposure would have cost against tokens sent, per day, the last ${OVERVIEW_DAYS} days`}
          days={days}
          series={[
            { name: "tokens direct exposure would cost", className: "s-direct", values: values((d) => d.direct) },
            { name: "tokens sent", className: "s-sent", values: values((d) => d.sent) },
          ]}
        />
        <ActiveDays days={overview.days} />
      </section>
      <section aria-labelledby="tools-heading">
        <h2 id="tools-heading">Top tools</h2>
        <TopTools tools={overview.audit.tools} />
      </section>
    </Layout>
  );
}
