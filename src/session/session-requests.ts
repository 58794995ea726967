// A 2025 session's request (`Mcp-Session-Id`): its record checked against the router's headers, or written at
// initialize; an admin's reload taken first; then served by the runtime's transport, the host's answers reaching the
// runtime that asked even after a reload (transport.ts).
import { httpError, sessionNotFound } from "../lib/responses.ts";
import { handleWithRetired } from "./transport.ts";
import { createSessionRecord } from "./record-creation.ts";
import { recordFields, routedTo, takeSubject, type RoutedRequest } from "./routed-request.ts";
import { filterAnew, onRuntime, type SessionParts } from "./session-parts.ts";
import { sessionView, type SessionRecord } from "./state.ts";

export async function serveSessionRequest(parts: SessionParts, request: Request, route: RoutedRequest): Promise<Response> {
  if (route.subject === undefined) return sessionNotFound();
  const record = await sessionRecordFor(parts, route);
  if (record instanceof Response) return record;
  const subjectChanged = takeSubject(parts.subject, route.subject);
  return onRuntime(parts, record, async (runtime, lease, touched) => {
    if (subjectChanged) parts.waitUntil(filterAnew(runtime));
    if (!("transport" in runtime)) return sessionNotFound();
    // The runtimes a reload retired still hear the host's answers to what they asked (transport.ts).
    const response = await handleWithRetired(runtime.transport, parts.runtimes.retiredTransports(), request);
    if (route.initialize) {
      if (response.ok) {
        // Answer initialize at once; the first tools/list waits for these connections.
        parts.waitUntil(runtime.registry.ensureEager());
        parts.meter.started(record.createdAt);
      } else if (!(await parts.store.transport())?.initialized) {
        await parts.end.end();
      }
    }
    if (request.method === "DELETE" && response.ok) await parts.end.end();
    // Usage and use go to the team's index when activity is written (at most once a minute), beside the answer, not
    // before it; not at initialize, which the index has just admitted (the figures wait for the next one).
    else if (touched && !route.initialize) parts.waitUntil(parts.reports.used(record));
    // Followed until its body ends: a call can outlast the idle period (a slow upstream, a program waiting for the
    // user's consent) or a reload, and neither may take its upstream clients away meanwhile.
    return request.method === "GET" && response.ok && response.body ? lease.hostStream(response) : lease.answer(response);
  });
}

/** The session's record, written at initialize; else the answer the request gets instead (404, or the wrong view). */
async function sessionRecordFor(parts: SessionParts, route: RoutedRequest): Promise<SessionRecord | Response> {
  const record = await parts.store.session();
  if (route.initialize && !record) return createSessionRecord(parts.env, parts.store, recordFields(route), route.view);
  if (!record || !routedTo(record, route)) return sessionNotFound();
  if (route.view !== undefined && route.view !== sessionView(record)) {
    // The view is fixed at initialize (the host has listed its tools under it): asking for another is a mistake.
    return httpError("invalid_view", `This session was started with ?view=${sessionView(record)}; start a new session to use ?view=${route.view}.`);
  }
  return parts.reload.takePending(record);
}
