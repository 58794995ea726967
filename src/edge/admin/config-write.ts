// The one code path that writes a team's config, for the admin API's `PUT /admin/teams/<team>/config` and the
// dashboard's edits alike: the store's validation (the config's schema, its upstream URLs, the secrets it names), the
// write, the admin action in the audit trail, what the change leaves of the team's upstream OAuth deleted, and the
// team's 2026 listen streams told their lists may have changed. A put reloads no live session: a 2026 request reads
// the config anew, a 2025 session keeps the config it started with until reloaded (POST .../sessions/reload).
//
// KV has no compare-and-swap. A writer that edits one key of the stored config (the dashboard) passes the version it
// read (`configVersion`); the stored text is read again just before the write and the write refused when it differs,
// so another admin's change made in between is not overwritten unseen. What remains is the instant between that
// read and the put, and KV's own eventual consistency across locations (a change made elsewhere within about a minute
// may not be seen yet): a narrow window, named in docs/dashboard.md.
import { kvKeys } from "../../config/keys.ts";
import type { ConfigIssue } from "../../config/validate.ts";
import type { Env } from "../../lib/env.ts";
import { sha256Hex } from "../../lib/bytes.ts";
import type { AuditPrincipal } from "../../views/audit-entry.ts";
import { adminAction, listsChanged, teamStore } from "./route-context.ts";
import { forgetStaleUpstreamAccounts } from "./stale-upstream-accounts.ts";

export type ConfigWrite =
  | { ok: true; warnings: string[] }
  | { ok: false; problem: "invalid"; issues: ConfigIssue[] }
  | { ok: false; problem: "stale" };

/** The version of a stored config's text: its SHA-256, what an edit form carries to say which config it was made on. */
export const configVersion = (text: string): Promise<string> => sha256Hex(text);

/**
 * The team's config as stored, unredacted (an edit of one key writes the rest back as it was: the admin API's GET
 * masks header values), with its version; undefined when the team has none or its text is not JSON.
 */
export async function storedConfig(env: Pick<Env, "TEAMS">, team: string): Promise<{ raw: Record<string, unknown>; version: string } | undefined> {
  const text = await env.TEAMS.get(kvKeys.config(team));
  if (text === null) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  return { raw: raw as Record<string, unknown>, version: await configVersion(text) };
}

/**
 * Validates and stores a team's whole config, and records it as the admin action `config.put` (refused or ok), `by` a
 * team admin when one made it. With `expected`, the stored config's version when the writer read it: a config changed
 * since is not overwritten.
 */
export async function writeTeamConfig(env: Env, request: Request, team: string, raw: unknown, expected?: string, by?: AuditPrincipal): Promise<ConfigWrite> {
  const before = await env.TEAMS.get(kvKeys.config(team));
  const acted = by ? { by } : {};
  if (expected !== undefined && (before === null || (await configVersion(before)) !== expected)) {
    await adminAction(env, { action: "config.put", team, outcome: "refused", ...acted }, request);
    return { ok: false, problem: "stale" };
  }
  const result = await teamStore(env, request).putConfig(team, raw);
  await adminAction(env, { action: "config.put", team, outcome: result.ok ? "ok" : "refused", ...acted }, request);
  if (!result.ok) return { ok: false, problem: "invalid", issues: result.issues };
  const unforgotten = await forgetStaleUpstreamAccounts(env, team, before, raw);
  await listsChanged(env, team);
  return { ok: true, warnings: [...result.warnings, ...unforgotten] };
}
