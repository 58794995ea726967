// What the router tells a session object about a request, read from the headers only it sets (ROUTE_HEADERS: the
// router strips them from what clients send), and whether the object's record is the one those headers name.
import { View } from "../config/view.ts";
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
}

/** Pure: the router's headers of `request`. */
export function readRoute(request: Request): RoutedRequest {
  const header = (name: string) => request.headers.get(name);
  const asked = View.safeParse(header(ROUTE_HEADERS.view) ?? undefined);
  return {
    team: header(ROUTE_HEADERS.team) ?? "",
    tokenId: header(ROUTE_HEADERS.tokenId) ?? "",
    user: header(ROUTE_HEADERS.user) ?? undefined,
    base: new URL(request.url).origin,
    sessionId: header(ROUTE_HEADERS.session) ?? "",
    initialize: header(ROUTE_HEADERS.initialize) === "1",
    view: asked.success ? asked.data : undefined,
    modern: header(ROUTE_HEADERS.era) === "modern",
  };
}

/** Pure: the record belongs to the team, token (or grant) and session id the router named. */
export const routedTo = (record: SessionRecord, route: RoutedRequest): boolean =>
  record.team === route.team && record.tokenId === route.tokenId && record.sessionId === route.sessionId;

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
