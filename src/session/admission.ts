// A new session's place among its principal's live sessions, asked of the team's index before the session's record is
// written (src/team/live-sessions.ts): taken (the principal's least recently used idle session may have ended for
// it), or the refusal the host gets, naming the bound and how to end a session.
import type { Env } from "../lib/env.ts";
import { log } from "../lib/log.ts";
import { httpError } from "../lib/responses.ts";
import { settings } from "../lib/settings.ts";
import { principalOf, type SessionRecord } from "./state.ts";

/** Undefined when the session may start; else the answer to its first request (429, nothing written). */
export async function admitSession(env: Env, fields: Pick<SessionRecord, "team" | "sessionId" | "tokenId" | "user">): Promise<Response | undefined> {
  const max = settings(env).maxSessionsPerPrincipal;
  const principal = principalOf(fields);
  const admission = await env.TEAM_INDEX.getByName(fields.team).admit(fields.team, fields.sessionId, principal, max);
  if (admission.admitted) {
    if (admission.ended !== undefined) log({ event: "session_limit", team: fields.team, principal, outcome: "ended_idle", session: admission.ended.slice(0, 8) });
    return undefined;
  }
  log({ event: "session_limit", team: fields.team, principal, outcome: "refused" });
  return httpError(
    "too_many_sessions",
    `Too many sessions: this token (or member) has ${admission.held} live sessions in this team, each answering a request right now, and may have ` +
      `${max} (MAX_SESSIONS_PER_PRINCIPAL). End one with an HTTP DELETE of its Mcp-Session-Id, or close a host that holds one, then start again.`,
  );
}
