// What the router tells a session object about a request, read from the headers only it sets (ROUTE_HEADERS: the
// router strips them from what clients send), and whether the object's record is the one those headers name.
import type { Subject } from "../config/subject.ts";
import { View } from "../config/view.ts";
import { readSubjectHeader } from "../auth/subject-header.ts";
import { ROUTE_HEADERS } from "../lib/env.ts";
import type { SessionRecord } from "./state.ts";

export interface RoutedRequest {
  team: string;
  tokenId: string;
  /** An OAuth caller's user id (never an email). */
  user: string | undefined;
  /** The origin the request came to: connect links use it when PUBLIC_URL is unset. */
  base: string;
  /** A 2025 session's id, or the id of the 2026-era object the router chose (`p.<token id>`, `ts.<nonce>`, `c.<token id>`). */
  sessionId: string;
  /** A 2025 `initialize` (the router minted the session id). */
  initialize: boolean;
  /**
   * The view asked for (the router checked it): the one a session starts with at initialize, later only one the URL
   * names. Absent when none was asked, or the header holds no view.
   */
  view: View | undefined;
  /** A 2026-07-28 request, served by the object's per-request handler (docs/protocol-2026.md). */
  modern: boolean;
  /**
   * Who the team's policies are decided for, as the router learned it with this request; undefined when the header is
   * missing, is not a subject, or names another principal than the token (or user) header: such a request is not the
   * router's and is served nothing (no record is read or written for it).
   */
  subject: Subject | undefined;
}

/** Pure: the subject belongs to the principal the route names (a member's user id, else the token's id). */
const subjectOfRoute = (subject: Subject | undefined, tokenId: string, user: string | undefined): Subject | undefined =>
  subject !== undefined && subject.kind === (user === undefined ? "token" : "member") && subject.id === (user ?? tokenId) ? subject : undefined;

/** Pure: the router's headers of `request`. */
export function readRoute(request: Request): RoutedRequest {
  const header = (name: string) => request.headers.get(name);
  const asked = View.safeParse(header(ROUTE_HEADERS.view) ?? undefined);
  const tokenId = header(ROUTE_HEADERS.tokenId) ?? "";
  const user = header(ROUTE_HEADERS.user) ?? undefined;
  return {
    team: header(ROUTE_HEADERS.team) ?? "",
    tokenId,
    user,
    base: new URL(request.url).origin,
    sessionId: header(ROUTE_HEADERS.session) ?? "",
    initialize: header(ROUTE_HEADERS.initialize) === "1",
    view: asked.success ? asked.data : undefined,
    modern: header(ROUTE_HEADERS.era) === "modern",
    subject: subjectOfRoute(readSubjectHeader(header(ROUTE_HEADERS.subject)), tokenId, user),
  };
}

/** Pure: the record belongs to the team, token (or grant) and session id the router named. */
export const routedTo = (record: SessionRecord, route: RoutedRequest): boolean =>
  record.team === route.team && record.tokenId === route.tokenId && record.sessionId === route.sessionId;

/**
 * The object's subject (one object for the object's life, which its views' CallSession holds) made the one this
 * request brought: in place, so that every holder of the views' parts reads the latest (a member's groups change at a
 * token refresh while a 2025 session lives; all of an object's requests are one principal's). True when what the
 * team's policies read of it changed since an earlier request of this instance (its catalogs are then filtered anew).
 */
export function takeSubject(held: Subject, brought: Subject): boolean {
  const before = held.id === PLACEHOLDER_ID ? undefined : policyKey(held);
  const fields: Partial<Subject> = held;
  for (const key of Object.keys(held) as Array<keyof Subject>) if (!(key in brought)) delete fields[key];
  Object.assign(held, brought);
  return before !== undefined && before !== policyKey(held);
}

/** The id of an object's subject before its first request is served (session-parts.ts). */
export const PLACEHOLDER_ID = "-";

const policyKey = (subject: Subject): string => JSON.stringify([subject.label, subject.email, subject.groups]);

/**
 * Pure: what a new record of the routed session starts from (its config, view and time are added when it is written),
 * in the order its keys have always been stored; `modern` marks a 2026-era object's.
 */
export const recordFields = (route: RoutedRequest, modern = false): Omit<SessionRecord, "createdAt" | "config" | "view"> => ({
  team: route.team,
  tokenId: route.tokenId,
  sessionId: route.sessionId,
  ...(modern ? { era: "modern" as const } : {}),
  base: route.base,
  ...(route.user ? { user: route.user } : {}),
});
