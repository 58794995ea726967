// A session object's record, written once at its start (a 2025 session at initialize, a 2026-era object on its
// first request) with the team's config of that moment and the view it keeps for its whole life, once the team's
// index has given it a place among its principal's live sessions.
import { loadTeamConfig } from "../config/load.ts";
import { resolveView, type View } from "../config/view.ts";
import type { Env } from "../lib/env.ts";
import { httpError } from "../lib/responses.ts";
import { codeModeAvailable } from "../lib/settings.ts";
import { admitSession } from "./admission.ts";
import type { SessionRecord, SessionStore } from "./state.ts";

/**
 * The record, written; else the answer the first request gets, nothing written: the 503 an operator must act on when
 * the team has no config that validates, a view refused, or the principal's bound (429).
 */
export async function createSessionRecord(
  env: Env,
  store: SessionStore,
  fields: Omit<SessionRecord, "createdAt" | "config" | "view">,
  asked: View | undefined,
): Promise<SessionRecord | Response> {
  const config = await loadTeamConfig(env.TEAMS, fields.team);
  if (!config?.ok) {
    const why = config ? "has nothing that validates" : "does not exist";
    return httpError("not_configured", `The team's config ${why}; an operator must store one with \`npm run team -- put\`.`);
  }
  // The URL's or the token's view, else the team's, else the default; code mode only where this deployment runs it.
  const chosen = resolveView(asked, config.config.view, codeModeAvailable(env));
  if ("refused" in chosen) return httpError("invalid_view", chosen.refused);
  const refused = await admitSession(env, fields);
  if (refused) return refused;
  const record: SessionRecord = { ...fields, view: chosen.view, createdAt: new Date().toISOString(), config: config.config };
  await store.putSession(record);
  return record;
}
