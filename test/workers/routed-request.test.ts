// Pure, but run in workerd: the module reads the Workers binding types (src/lib/env.ts), which the Node project lacks.
// What a session object reads of the router's headers (src/session/routed-request.ts): the routed session, the view
// asked for (none when the header holds no view), the era, whether the record is the one named, and the fields a new
// record starts from, in the order records have always been stored.
import { describe, expect, it } from "vitest";
import { ROUTE_HEADERS } from "../../src/lib/env.ts";
import { readRoute, recordFields, routedTo, takeSubject } from "../../src/session/routed-request.ts";
import { subjectHeaderValue } from "../../src/auth/subject-header.ts";
import type { Subject } from "../../src/config/subject.ts";
import type { SessionRecord } from "../../src/session/state.ts";

const request = (headers: Record<string, string>) => new Request("https://proxy.example/t/acme/mcp?view=code", { method: "POST", headers });

const TOKEN_SUBJECT: Subject = { kind: "token", id: "0123456789abcdef", label: "ci-bot ✓" };
const ROUTED = {
  [ROUTE_HEADERS.team]: "acme",
  [ROUTE_HEADERS.tokenId]: "0123456789abcdef",
  [ROUTE_HEADERS.session]: "s1",
  [ROUTE_HEADERS.subject]: subjectHeaderValue(TOKEN_SUBJECT),
};

describe("the router's headers", () => {
  it("name the team, token, session and origin; no user, initialize, view or era unless set", () => {
    expect(readRoute(request(ROUTED))).toEqual({
      team: "acme",
      tokenId: "0123456789abcdef",
      user: undefined,
      base: "https://proxy.example",
      sessionId: "s1",
      initialize: false,
      view: undefined,
      modern: false,
      subject: TOKEN_SUBJECT,
    });
  });

  it("carry the subject only when it is the principal's the route names: the token's, or the member's by user id", () => {
    const member: Subject = { kind: "member", id: "acme.u1", email: "ada@example.com", groups: ["eng", "ops"] };
    const asMember = { ...ROUTED, [ROUTE_HEADERS.user]: "acme.u1", [ROUTE_HEADERS.subject]: subjectHeaderValue(member) };
    expect(readRoute(request(asMember)).subject).toEqual(member);
    // A member's route with the token's subject, a token's route with a member's, another id, no header, not JSON.
    expect(readRoute(request({ ...ROUTED, [ROUTE_HEADERS.user]: "acme.u1" })).subject).toBeUndefined();
    expect(readRoute(request({ ...ROUTED, [ROUTE_HEADERS.subject]: subjectHeaderValue(member) })).subject).toBeUndefined();
    expect(readRoute(request({ ...asMember, [ROUTE_HEADERS.user]: "acme.u2" })).subject).toBeUndefined();
    const { [ROUTE_HEADERS.subject]: _, ...without } = ROUTED;
    expect(readRoute(request(without)).subject).toBeUndefined();
    expect(readRoute(request({ ...ROUTED, [ROUTE_HEADERS.subject]: "{kind: token" })).subject).toBeUndefined();
  });

  it("make the object's subject the latest a request brought, in place (every holder of the views' parts sees it)", () => {
    const held: Subject = { kind: "member", id: "acme.u1", email: "ada@example.com", groups: ["eng"] };
    const holder = { subject: held };
    takeSubject(held, { kind: "member", id: "acme.u1", groups: ["ops"] });
    expect(holder.subject).toEqual({ kind: "member", id: "acme.u1", groups: ["ops"] });
    expect(holder.subject).toBe(held);
  });

  it("carry a user, an initialize, a view and the 2026 era when the router set them", () => {
    const route = readRoute(
      request({ ...ROUTED, [ROUTE_HEADERS.user]: "acme.u1", [ROUTE_HEADERS.initialize]: "1", [ROUTE_HEADERS.view]: "direct", [ROUTE_HEADERS.era]: "modern" }),
    );
    expect(route).toMatchObject({ user: "acme.u1", initialize: true, view: "direct", modern: true });
  });

  it("read an unknown view, another initialize flag or another era as none (the URL's query is not the router's)", () => {
    const route = readRoute(request({ ...ROUTED, [ROUTE_HEADERS.initialize]: "true", [ROUTE_HEADERS.view]: "everything", [ROUTE_HEADERS.era]: "2026" }));
    expect(route).toMatchObject({ initialize: false, view: undefined, modern: false });
  });

  it("read missing names as empty, which no record has", () => {
    const route = readRoute(request({}));
    expect(route).toMatchObject({ team: "", tokenId: "", sessionId: "" });
  });
});

describe("the routed session's record", () => {
  const route = readRoute(request({ ...ROUTED, [ROUTE_HEADERS.user]: "acme.u1" }));
  const record = { team: "acme", tokenId: "0123456789abcdef", sessionId: "s1" } as SessionRecord;

  it("is the one whose team, token and session id the router named", () => {
    expect(routedTo(record, route)).toBe(true);
    expect(routedTo({ ...record, team: "other" }, route)).toBe(false);
    expect(routedTo({ ...record, tokenId: "fedcba9876543210" }, route)).toBe(false);
    expect(routedTo({ ...record, sessionId: "s2" }, route)).toBe(false);
  });

  it("starts from the routed fields, the era's mark between the session id and the origin", () => {
    expect(Object.keys(recordFields(route))).toEqual(["team", "tokenId", "sessionId", "base", "user"]);
    expect(Object.keys(recordFields(route, true))).toEqual(["team", "tokenId", "sessionId", "era", "base", "user"]);
    expect(recordFields(route, true)).toMatchObject({ era: "modern", base: "https://proxy.example", user: "acme.u1" });
    expect("user" in recordFields(readRoute(request(ROUTED)))).toBe(false);
  });
});
