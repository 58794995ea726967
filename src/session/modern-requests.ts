// A 2026-era request (the router chose this object: a principal's, or a toolset's by its handle). The object's record
// is written on its first request, with the team's config of that moment; later ones take admin reloads as sessions
// do. Each request is served whole by the per-request handler; the upstream registry stays.
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import { DEFAULT_VIEW } from "../config/view.ts";
import { sessionNotFound } from "../lib/responses.ts";
import { createSessionRecord } from "./record-creation.ts";
import { recordFields, routedTo, takeSubject, type RoutedRequest } from "./routed-request.ts";
import { filterAnew, onRuntime, type SessionParts } from "./session-parts.ts";
import type { SessionRecord } from "./state.ts";

export async function serveModernRequest(parts: SessionParts, request: Request, route: RoutedRequest): Promise<Response> {
  if (route.subject === undefined) return sessionNotFound();
  const record = await modernRecordFor(parts, route);
  if (record instanceof Response) return record;
  const subjectChanged = takeSubject(parts.subject, route.subject);
  return onRuntime(parts, record, async (runtime, lease, touched) => {
    if (subjectChanged) parts.waitUntil(filterAnew(runtime));
    if (!("handler" in runtime)) return sessionNotFound();
    const response = await serveParsed(runtime.handler, request);
    if (touched) parts.waitUntil(parts.reports.used(record));
    return lease.answer(response);
  });
}

/**
 * The request handed to the SDK's handler with its body parsed: the router has read it within its size limit and
 * found it JSON, so the handler need not copy the request and read the body again. A body that is not JSON (nothing
 * but the router sends here) goes as it came, for the SDK to answer.
 */
async function serveParsed(handler: McpHttpHandler, request: Request): Promise<Response> {
  const text = await request.text();
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(text);
  } catch {
    return handler.fetch(new Request(request, { body: text }));
  }
  return handler.fetch(request, { parsedBody });
}

/**
 * The object's record, written (and its start counted) at its first request; else the answer the request gets
 * instead. The view: `code` for a principal's code object (the router sends `?view=code` there), else the meta-tools.
 */
async function modernRecordFor(parts: SessionParts, route: RoutedRequest): Promise<SessionRecord | Response> {
  const record = await parts.store.session();
  if (!record) {
    const created = await createSessionRecord(parts.env, parts.store, recordFields(route, true), route.view === "code" ? "code" : DEFAULT_VIEW);
    if (!(created instanceof Response)) parts.meter.started(created.createdAt);
    return created;
  }
  if (record.era !== "modern" || !routedTo(record, route)) return sessionNotFound();
  return parts.reload.takePending(record);
}
