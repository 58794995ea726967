// The one shape of an audit trail entry: who called which tool (or loaded a server, or answered an approval, or took
// an admin action), through which view and era, how it ended, how long it took and how many bytes passed. Never the
// arguments, a result or a secret: at most a SHA-256 of the arguments, when the team's config asks for it. Sessions
// write entries (src/views/call-audit.ts, into their outbox: src/session/audit-outbox.ts), the team's index keeps them
// (src/team/audit-trail.ts), the admin API reads them (src/edge/admin/audit-routes.ts), and each is one log line.
import * as z from "zod";
import { Subject } from "../config/subject.ts";
import { hex } from "../lib/bytes.ts";
import type { AuditEntry as AuditEntryShape } from "../lib/audit-types.ts";
import type { ProxyErrorKind } from "../lib/errors.ts";
import { UPSTREAM_FAULT_KINDS } from "../lib/upstream-fault.ts";
import { accepted, type Same } from "../store/kv.ts";

/** What an entry records: an upstream tool call, a lazy server's load, a user's answer to an approval, an admin action. */
export const AuditKind = z.enum(["tool_call", "load", "approval", "admin"]);
export type AuditKind = z.infer<typeof AuditKind>;

/** The proxy's own failure kinds (src/lib/errors.ts) besides an upstream fault's; the list is checked against the union below. */
const PROXY_KINDS = [
  "unknown_tool",
  "invalid_arguments",
  "unavailable",
  "unknown_server",
  "load_failed",
  "evicted",
  "invalid_toolset",
  "program_failed",
  "approval_required",
  "approval_refused",
  "resource_not_found",
  "invalid_params",
  "not_supported",
  "unrelated_request",
  "session_not_found",
  "session_id_required",
  "not_configured",
  "rate_limited",
  "method_not_allowed",
  "unsupported_version",
  "unsupported_media_type",
  "not_acceptable",
  "invalid_request",
  "parse_error",
  "body_too_large",
  "invalid_view",
  "too_many_sessions",
  "secrets_disabled",
  "invalid_secret_name",
] as const satisfies readonly ProxyErrorKind[];
// A kind added to the union and not to these lists fails to compile here.
const everyKind: Exclude<ProxyErrorKind, (typeof PROXY_KINDS)[number] | (typeof UPSTREAM_FAULT_KINDS)[number]> extends never ? true : never = true;
void everyKind;

/**
 * How a call ended: `ok`; `tool_error` (the upstream's own isError result); the kind of a failure the proxy names
 * (`timeout`, `unknown_tool`, `unreachable`…); `denied` (a policy hid or refused the tool); `approval_refused` (the
 * user said no); `cancelled` (the host gave up on the request); `refused` (an admin action not taken).
 */
export const AuditOutcome = z.enum([
  "ok",
  "tool_error",
  "denied",
  "cancelled",
  "refused",
  ...UPSTREAM_FAULT_KINDS,
  ...PROXY_KINDS,
]);
export type AuditOutcome = z.infer<typeof AuditOutcome>;

/** Who acted: a team token, a signed-in member (the shape policies are decided for: src/config/subject.ts), or the admin API. */
export const AuditPrincipal = z.strictObject({
  ...Subject.pick({ id: true, label: true, email: true }).shape,
  kind: z.enum([...Subject.shape.kind.options, "admin"]),
});
export type AuditPrincipal = z.infer<typeof AuditPrincipal>;

/** An entry's id: the time in base 36 (so ids sort by time) and 64 random bits (so two never collide). */
export const AUDIT_ID = /^[0-9a-z]{9}-[0-9a-f]{16}$/;

/** A W3C traceparent: version, trace id, parent id, flags. */
export const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** At most this many characters of what a host names itself (its clientInfo): host text, so bounded. */
const CLIENT_TEXT = 100;

/** Strict: a field the schema does not name (an argument, say) makes an entry unreadable rather than kept. */
export const AuditEntry = z.strictObject({
  id: z.string().regex(AUDIT_ID),
  /** When the call started (ISO 8601, UTC). */
  at: z.iso.datetime(),
  kind: AuditKind,
  principal: AuditPrincipal,
  /** The host's clientInfo, where it told it (2025: at initialize; 2026: on each request). */
  client: z.object({ name: z.string().max(CLIENT_TEXT), version: z.string().max(CLIENT_TEXT).optional() }).optional(),
  view: z.enum(["meta", "direct", "code"]).optional(),
  era: z.enum(["2025", "2026"]).optional(),
  /** `server/tool` (single-MCP mode: `mcp/<tool>`); a load: the server's name; an admin action: `admin/<action>`. */
  tool: z.string().min(1).max(400),
  /** An admin action's object (a token id, a server, a secret's name: never a value). */
  target: z.string().max(400).optional(),
  outcome: AuditOutcome,
  ms: z.number().int().nonnegative(),
  /** Bytes of the arguments as JSON, and of the answer as JSON. */
  request_bytes: z.number().int().nonnegative(),
  answer_bytes: z.number().int().nonnegative(),
  /** The host request's W3C trace context (`_meta.traceparent`, else its `traceparent` header), when well formed. */
  traceparent: z.string().regex(TRACEPARENT).optional(),
  /** SHA-256 (hex) of the arguments' canonical JSON, only when the team's config sets `audit.hash_arguments`. */
  arguments_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;
/** The RPC's type (src/lib/env.ts, which imports nothing) is the schema's; there the outcome is any string. */
const entryMatches: Same<Omit<AuditEntry, "outcome">, Omit<AuditEntryShape, "outcome">> = true;
void entryMatches;

/** A stored or received entry, read through the schema (undefined when it does not parse). */
export const readAuditEntry = (value: unknown): AuditEntry | undefined => accepted(AuditEntry, value);

/** A new entry id at `now` (ms). */
export function auditId(now: number): string {
  return `${now.toString(36).padStart(9, "0")}-${hex(crypto.getRandomValues(new Uint8Array(8)))}`;
}

/**
 * Who a session acts for, as its entries name them. Today the session knows the principal string (`t:<token id>`,
 * `u:<user id>`); once it carries the caller's `Subject`, this is the one place to read label and email from it.
 */
/** A caller as an entry names it: kind, id, a token's label, a member's verified email (never groups). */
export const subjectPrincipal = ({ kind, id, label, email }: Subject): AuditPrincipal => ({
  kind,
  id,
  ...(label === undefined ? {} : { label }),
  ...(email === undefined ? {} : { email }),
});

/** A caller named only by the session's principal string (`t:<token id>`, `u:<user id>`): where no subject is known. */
export function auditPrincipal(who: { principal: string }): AuditPrincipal {
  return who.principal.startsWith("u:") ? { kind: "member", id: who.principal.slice(2) } : { kind: "token", id: who.principal.replace(/^t:/, "") };
}

/** An admin action as its `admin` log line names it: the action, its team and object, whether it was taken. */
export interface AdminAction {
  action: string;
  team: string;
  target?: string;
  outcome: "ok" | "refused";
  /** Who took it when not the admin API: a team admin signed in to the team's dashboard (a member). */
  by?: AuditPrincipal;
}

/** The audit entry of an admin action: its `by`, else the admin API's one principal (whoever holds ADMIN_TOKEN). */
export function adminEntry(action: AdminAction, traceparent: string | undefined, now = Date.now()): AuditEntry {
  return {
    id: auditId(now),
    at: new Date(now).toISOString(),
    kind: "admin",
    principal: action.by ?? { kind: "admin", id: "admin" },
    tool: `admin/${action.action}`,
    ...(action.target ? { target: action.target.slice(0, 400) } : {}),
    outcome: action.outcome,
    ms: 0,
    request_bytes: 0,
    answer_bytes: 0,
    ...(traceparent && TRACEPARENT.test(traceparent) ? { traceparent } : {}),
  };
}
