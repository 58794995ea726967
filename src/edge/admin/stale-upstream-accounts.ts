// What a config change leaves of a team's upstream OAuth, deleted: the accounts connected at an OAuth upstream the new
// config drops, takes `auth` from or points at another URL, and the proxy's registration at its authorization server.
import { kvKeys } from "../../config/keys.ts";
import { SINGLE_UPSTREAM } from "../../config/validate.ts";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { adminAction } from "./route-context.ts";

/** The prefix of the team's registrations at upstreams' authorization servers in TEAMS (`kvKeys.upstreamClient`). */
const upstreamClientPrefix = (team: string) => kvKeys.upstreamClient(team, "");

/**
 * Each upstream of a config that signs in with OAuth, by name (single-MCP mode's one as SINGLE_UPSTREAM), with its URL.
 * Read leniently, as stored: a stored config may no longer validate; a disabled entry still counts (it keeps its accounts).
 */
function oauthUpstreams(raw: unknown): Map<string, unknown> {
  const found = new Map<string, unknown>();
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return found;
  const entries = "mcp" in raw ? (raw as { mcp: unknown }).mcp : { [SINGLE_UPSTREAM]: raw };
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) return found;
  for (const [name, entry] of Object.entries(entries)) {
    const { auth, url } = (typeof entry === "object" && entry !== null ? entry : {}) as { auth?: unknown; url?: unknown };
    if (typeof auth === "object" && auth !== null) found.set(name, url);
  }
  return found;
}

/** The OAuth upstreams of `before` that `after` drops, takes `auth` from, or points at another URL (`after` undefined: all). */
export function staleOAuthUpstreams(before: unknown, after: unknown): string[] {
  const now = oauthUpstreams(after);
  return [...oauthUpstreams(before)].filter(([name, url]) => !now.has(name) || now.get(name) !== url).map(([name]) => name);
}

/**
 * Deletes what a config change leaves of the team's upstream OAuth (docs/oauth.md 3.3, Deletion): for each OAuth
 * upstream of the stored config (`before`, its JSON text) that the new one (`after`) drops, takes `auth` from or points
 * at another URL, every account's credentials (the team index) and the proxy's registration at its authorization server
 * (TEAMS). When the config is deleted (`after` undefined), every credential and registration the team still holds goes
 * too, also those of servers no config names any more. Each is an `admin` line. Best-effort, like `listsChanged`: the
 * config change stands, and what could not be deleted is logged and answered as warnings.
 */
export async function forgetStaleUpstreamAccounts(env: Pick<Env, "TEAMS" | "TEAM_INDEX">, team: string, before: string | null, after: unknown): Promise<string[]> {
  let old: unknown;
  try {
    old = before === null ? undefined : JSON.parse(before);
  } catch {
    old = undefined;
  }
  const index = env.TEAM_INDEX.getByName(team);
  const warnings: string[] = [];
  /** Runs one deletion; `act` answers whether it found anything (the `admin` line says so only then). */
  const forget = async (target: string, act: () => Promise<boolean>) => {
    try {
      if (await act()) await adminAction(env, { action: "upstream.forget", team, target, outcome: "ok" });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      await adminAction(env, { action: "upstream.forget", team, target, outcome: "refused" });
      log({ event: "unhandled", error: `upstream accounts of ${team}/${target} not deleted: ${reason}` });
      warnings.push(
        `the connected accounts of ${target} could not be deleted (${reason}): delete them with npm run team -- oauth disconnect ${team} ${target === "*" ? "<server>" : target} <account>`,
      );
    }
  };
  for (const server of staleOAuthUpstreams(old, after)) {
    await forget(server, async () => {
      await Promise.all([index.deleteCredentials(team, { server }), env.TEAMS.delete(kvKeys.upstreamClient(team, server))]);
      return true;
    });
  }
  if (after === undefined) {
    await forget("*", async () => {
      const registrations = await env.TEAMS.list({ prefix: upstreamClientPrefix(team) });
      const [credentials] = await Promise.all([index.deleteCredentials(team, {}), ...registrations.keys.map((k) => env.TEAMS.delete(k.name))]);
      return credentials > 0 || registrations.keys.length > 0;
    });
  }
  return warnings;
}
