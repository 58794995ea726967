// What the dashboard's pages show, read from the stores the admin API reads, through its code: the team store (configs,
// tokens), the usage ledger as the usage route reports it (`usageReport`), and the audit trail's tool calls counted by
// the team's index. Never a token, a secret or a header value: counts, names and the figures of the ledger.
import type { z } from "zod";
import { kvKeys } from "../../config/keys.ts";
import { loadTeamConfig } from "../../config/load.ts";
import type { AuditSummary, Env } from "../../lib/env.ts";
import { firstDayOf } from "../../session/usage.ts";
import type { TeamStore } from "../../store/store.ts";
import type { UsageReport } from "../admin/schemas.ts";
import { USAGE_DEFAULT_DAYS, totalsOf, usageReport } from "../admin/usage-routes.ts";

/** The team list's window for calls: a week. */
export const LIST_DAYS = 7;
/** The overview's window: the usage API's default, so its totals are the API's. */
export const OVERVIEW_DAYS = USAGE_DEFAULT_DAYS;
/** How many tools the overview ranks. */
export const TOP_TOOLS = 10;

/** One row of the operator's team list. `servers` is undefined when the stored config does not validate. */
export interface TeamRow {
  team: string;
  servers: number | undefined;
  tokens: number;
  calls: number;
}

/**
 * Every team with a config, each with its servers, tokens and tool calls of the last LIST_DAYS days. Each team costs a
 * config read, a token list and a question to its index (the ledger's days, which it keeps by day): an operator's page
 * of a deployment's teams, not a request path.
 */
export async function teamRows(env: Env, store: TeamStore): Promise<TeamRow[]> {
  const teams = await store.listTeams();
  return Promise.all(
    teams.map(async (team) => {
      const [config, tokens, days] = await Promise.all([loadTeamConfig(env.TEAMS, team), store.listTokens(team), env.TEAM_INDEX.getByName(team).usage(LIST_DAYS)]);
      return {
        team,
        servers: config?.ok ? config.config.upstreams.length : undefined,
        tokens: tokens.length,
        calls: days.reduce((sum, d) => sum + d.figures.calls.tools, 0),
      };
    }),
  );
}

/** One UTC day of the overview: the ledger's sessions and figures beside the trail's calls and errors. */
export interface OverviewDay {
  day: string;
  sessions: number;
  calls: number;
  errors: number;
  direct: number;
  sent: number;
}

export interface TeamOverview {
  team: string;
  /** Every day of the window, oldest first, those without activity included (zeros). */
  days: OverviewDay[];
  /** The usage API's report of the same window. */
  usage: z.infer<typeof UsageReport>;
  /** The audit trail's tool calls of the window. */
  audit: AuditSummary;
}

/** The team's overview of the last OVERVIEW_DAYS days, or undefined when the team has no config. */
export async function teamOverview(env: Env, team: string, now = Date.now()): Promise<TeamOverview | undefined> {
  if ((await env.TEAMS.get(kvKeys.config(team))) === null) return undefined;
  const index = env.TEAM_INDEX.getByName(team);
  const first = firstDayOf(now, OVERVIEW_DAYS);
  const [ledger, audit] = await Promise.all([index.usage(OVERVIEW_DAYS), index.auditSummary(team, Date.parse(`${first}T00:00:00Z`), TOP_TOOLS)]);
  const usage = usageReport(team, ledger);
  const trail = new Map(audit.days.map((d) => [d.day, d]));
  const byDay = new Map(usage.days.map((d) => [d.day, d]));
  const days = windowDays(first, OVERVIEW_DAYS).map((day) => {
    const figures = byDay.get(day);
    return {
      day,
      sessions: figures?.sessions ?? 0,
      calls: figures?.calls.tools ?? 0,
      errors: trail.get(day)?.errors ?? 0,
      direct: figures?.direct ?? 0,
      sent: figures ? totalsOf(figures).sent : 0,
    };
  });
  return { team, days, usage, audit };
}

/** The `count` UTC days from `first` on. */
function windowDays(first: string, count: number): string[] {
  const start = Date.parse(`${first}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}
