// What the upstreams page shows of each configured server of a team, from four sources: a bounded probe through the
// session's own connect (src/session/upstream-probe.ts), the audit trail's calls of the last AUDIT_WINDOW_HOURS per
// server (counted by the team's index), the team's catalog cache (how many tools, read when), and the OAuth accounts
// the admin API's account routes list. Never a header value, a token or an error's text: fault kinds and figures.
import { loadTeamConfig } from "../../config/load.ts";
import type { ResolvedConfig } from "../../config/validate.ts";
import type { AuditServerFigures, CredentialInfo, Env } from "../../lib/env.ts";
import { teamReadings, type ServerReading } from "../../modern/team-catalog.ts";
import { probeUpstreams, type ProbeResult } from "../../session/upstream-probe.ts";

/** The window of the audit trail's figures: a day. */
export const AUDIT_WINDOW_HOURS = 24;

/** One server of the page. */
export interface UpstreamFigures {
  server: string;
  transport: string;
  /** "shared" or "per_user" for an OAuth server; absent for one with static headers. */
  oauth: "shared" | "per_user" | undefined;
  probe: ProbeResult;
  calls: AuditServerFigures | undefined;
  reading: ServerReading | undefined;
  accounts: CredentialInfo[];
}

export type TeamUpstreams = { team: string; ok: true; servers: UpstreamFigures[] } | { team: string; ok: false; errors: number };

/** The team's servers with their figures; undefined when the team has no config. */
export async function teamUpstreams(env: Env, team: string, now = Date.now()): Promise<TeamUpstreams | undefined> {
  const loaded = await loadTeamConfig(env.TEAMS, team);
  if (loaded === undefined) return undefined;
  if (!loaded.ok) return { team, ok: false, errors: loaded.errors.length };
  const config: ResolvedConfig = loaded.config;
  const index = env.TEAM_INDEX.getByName(team);
  const hasOauth = config.upstreams.some((u) => u.auth !== undefined);
  const [probes, calls, readings, accounts] = await Promise.all([
    probeUpstreams(env, team, config),
    index.auditServers(team, now - AUDIT_WINDOW_HOURS * 3_600_000),
    teamReadings(env.TEAMS, team, config),
    hasOauth ? index.listCredentials(team) : Promise.resolve([]),
  ]);
  const servers = config.upstreams.map((spec, i) => ({
    server: spec.name,
    transport: spec.transport,
    oauth: spec.auth?.mode,
    probe: probes[i]!,
    calls: calls.find((c) => c.server === spec.name),
    reading: readings.find((r) => r.server === spec.name),
    accounts: accounts.filter((a) => a.server === spec.name),
  }));
  return { team, ok: true, servers };
}
