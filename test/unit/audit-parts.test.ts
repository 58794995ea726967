// The audit trail's pure parts: the entry's schema (no field beyond its own, so no argument can ride along), the
// principal and outcome it names, an admin action's entry, the API's query (every bad parameter named) and its
// cursor, the tool filter, and the config's `audit` key.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/validate.ts";
import { toToolResult, ProxyError, UpstreamError } from "../../src/lib/errors.ts";
import { AuditParams, auditQuery, decodeAuditCursor, encodeAuditCursor, toolFilter } from "../../src/team/audit-query.ts";
import { AuditEntry, adminEntry, auditId, auditPrincipal, readAuditEntry } from "../../src/views/audit-entry.ts";
import { resultOutcome, thrownOutcome } from "../../src/views/call-audit.ts";

const now = Date.parse("2026-11-28T16:00:00Z");
const entry: AuditEntry = {
  id: auditId(now),
  at: new Date(now).toISOString(),
  kind: "tool_call",
  principal: { kind: "member", id: "team.abc", email: "ann@example.com" },
  client: { name: "claude-code", version: "2.1.0" },
  view: "meta",
  era: "2025",
  tool: "github/get_issue",
  outcome: "ok",
  ms: 12,
  request_bytes: 20,
  answer_bytes: 300,
  traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
};

describe("the entry", () => {
  it("reads a whole entry, and refuses one with a field of its own (an argument could not ride along)", () => {
    expect(readAuditEntry(entry)).toEqual(entry);
    expect(readAuditEntry({ ...entry, arguments: { q: "x" } })).toBeUndefined();
    expect(readAuditEntry({ ...entry, principal: { ...entry.principal, token: "secret" } })).toBeUndefined();
    expect(readAuditEntry({ ...entry, outcome: "fine" })).toBeUndefined();
    expect(readAuditEntry({ ...entry, traceparent: "not-a-trace" })).toBeUndefined();
  });

  it("has ids that sort by time and never collide", () => {
    const ids = Array.from({ length: 100 }, (_, i) => auditId(now + i * 1000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 1000 }, () => auditId(now))).size).toBe(1000);
  });

  it("names the session's principal as a token or a member", () => {
    expect(auditPrincipal({ principal: "t:0123456789abcdef" })).toEqual({ kind: "token", id: "0123456789abcdef" });
    expect(auditPrincipal({ principal: "u:team.xyz" })).toEqual({ kind: "member", id: "team.xyz" });
  });

  it("names how a call ended: ok, the upstream's own error, the proxy's kind, a cancellation", () => {
    expect(resultOutcome({ content: [] }, false)).toBe("ok");
    expect(resultOutcome({ content: [], isError: true }, false)).toBe("tool_error");
    expect(resultOutcome(toToolResult(new UpstreamError("gh", { kind: "timeout", ms: 5 })), false)).toBe("timeout");
    expect(resultOutcome(toToolResult(new ProxyError("unknown_tool", "no")), false)).toBe("unknown_tool");
    expect(resultOutcome(toToolResult(new UpstreamError("gh", { kind: "closed" })), true)).toBe("cancelled");
    expect(thrownOutcome(new ProxyError("evicted", "gone"), false)).toBe("evicted");
    expect(thrownOutcome(new Error("?"), false)).toBe("unavailable");
  });

  it("makes an admin action's entry, its trace context only when well formed", () => {
    const made = adminEntry({ action: "token.mint", team: "t", target: "0123456789abcdef", outcome: "ok" }, "garbage", now);
    expect(readAuditEntry(made)).toEqual(made);
    expect(made).toMatchObject({ kind: "admin", principal: { kind: "admin", id: "admin" }, tool: "admin/token.mint", target: "0123456789abcdef" });
    expect(made.traceparent).toBeUndefined();
  });
});

describe("the audit API's query", () => {
  it("reads filters, a limit and a cursor into the index's query", () => {
    const cursor = encodeAuditCursor({ at: now, id: entry.id });
    const parsed = AuditParams.parse({ since: "2026-11-27", until: "2026-11-28T12:00:00+01:00", principal: "ci-bot", tool: "github/*", outcome: "denied", limit: "50", cursor });
    expect(auditQuery(parsed)).toEqual({
      since: Date.parse("2026-11-27T00:00:00Z"),
      until: Date.parse("2026-11-28T11:00:00Z"),
      principal: "ci-bot",
      tool: "github/*",
      outcome: "denied",
      limit: 50,
      cursor: { at: now, id: entry.id },
    });
    expect(auditQuery(AuditParams.parse({}))).toEqual({ limit: 100 });
  });

  it("names each bad parameter", () => {
    const path = (q: Record<string, string>) => AuditParams.safeParse(q).error?.issues.map((i) => i.path.join(".") || "(root)");
    expect(path({ limit: "0" })).toEqual(["limit"]);
    expect(path({ limit: "1001" })).toEqual(["limit"]);
    expect(path({ limit: "-1" })).toEqual(["limit"]);
    expect(path({ outcome: "fine" })).toEqual(["outcome"]);
    expect(path({ since: "last week" })).toEqual(["since"]);
    expect(path({ since: "2026-11-28", until: "2026-11-28" })).toEqual(["until"]);
    expect(path({ cursor: "eyJ4IjoxfQ" })).toEqual(["cursor"]);
    expect(path({ colour: "blue" })).toEqual(["(root)"]);
  });

  it("decodes only cursors it wrote", () => {
    const cursor = { at: now, id: entry.id };
    expect(decodeAuditCursor(encodeAuditCursor(cursor))).toEqual(cursor);
    for (const bad of ["", "!!!", "eyJhdCI6MX0", encodeAuditCursor({ at: -1, id: entry.id })]) expect(decodeAuditCursor(bad)).toBeUndefined();
  });

  it("reads a tool filter as one tool or a server's every tool", () => {
    expect(toolFilter("github/get_issue")).toEqual({ exact: "github/get_issue" });
    expect(toolFilter("github/*")).toEqual({ server: "github" });
  });
});

describe("the config's audit key", () => {
  it("defaults days to 30, keeps hash_arguments off, and refuses what is out of range", () => {
    const ok = parseConfig({ audit: { hash_arguments: true }, mcp: { a: { url: "https://a.example/mcp" } } });
    expect(ok.ok && ok.config.audit).toEqual({ days: 30, hashArguments: true });
    const none = parseConfig({ mcp: { a: { url: "https://a.example/mcp" } } });
    expect(none.ok && none.config.audit).toBeUndefined();
    const bad = parseConfig({ audit: { days: 0, keep: true }, mcp: { a: { url: "https://a.example/mcp" } } });
    expect(bad.ok ? [] : bad.errors).toEqual(expect.arrayContaining([expect.stringContaining("audit.days"), expect.stringContaining("audit")]));
  });
});
