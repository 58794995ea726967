// The audit entry of one tool call or load, made where the call ends (src/views/tool-call.ts, src/views/lazy-loads.ts)
// and handed to the session's recorder (its outbox: src/session/audit-outbox.ts). What it reads of the call: who the
// session acts for, the host's name, the view and era, the trace context, how it ended and how many bytes passed;
// never the arguments or the result themselves (a SHA-256 of the arguments when the team asks for it).
import { CLIENT_INFO_META_KEY, TRACEPARENT_META_KEY, type CallToolResult } from "@modelcontextprotocol/server";
import type { AuditSettings } from "../config/validate.ts";
import type { View } from "../config/view.ts";
import { sha256Hex } from "../lib/bytes.ts";
import { errorKindOf, ProxyError } from "../lib/errors.ts";
import type { HostExtra } from "../relay/bridge.ts";
import { canonicalJson } from "../store/pins.ts";
import { AuditEntry, AuditOutcome, TRACEPARENT, auditId, auditPrincipal, subjectPrincipal, type AuditKind } from "./audit-entry.ts";
import type { Subject } from "../config/subject.ts";

/** Where a session's entries go: its outbox, which writes each before the answer and ships it to the team's trail. */
export interface AuditRecorder {
  /** Resolves once the entry is in the object's storage: the call's answer goes after it. */
  record(team: string, days: number | undefined, entry: AuditEntry): Promise<void>;
}

/** What a session's audit needs beside its identity: the recorder, its view and era, the host's name, the team's settings. */
export interface SessionAudit {
  recorder: AuditRecorder;
  view: View;
  era: "2025" | "2026";
  /** The host's clientInfo as its session's initialize gave it (2025); a 2026 request carries its own. */
  client?: (() => { name: string; version?: string } | undefined) | undefined;
  settings?: AuditSettings | undefined;
  /** Who the session's calls are made for (one object, the latest a request brought): what entries name. */
  subject?: Subject | undefined;
}

const encoder = new TextEncoder();
const jsonBytes = (value: unknown): number => (value === undefined ? 0 : encoder.encode(JSON.stringify(value)).byteLength);
const bounded = (text: unknown): string | undefined => (typeof text === "string" && text !== "" ? text.slice(0, 100) : undefined);

/** The host's name: a 2026 request's own `_meta` envelope, else what the session's initialize said. */
function clientOf(audit: SessionAudit, host: HostExtra | undefined): AuditEntry["client"] {
  const told = (host?.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_INFO_META_KEY] as { name?: unknown; version?: unknown } | undefined;
  const info = told ?? audit.client?.();
  const name = bounded(info?.name);
  if (!name) return undefined;
  const version = bounded(info?.version);
  return version ? { name, version } : { name };
}

/** The host request's W3C trace context: its `_meta.traceparent`, else its `traceparent` header; only when well formed. */
function traceparentOf(host: HostExtra | undefined): string | undefined {
  const meta = (host?.mcpReq._meta as Record<string, unknown> | undefined)?.[TRACEPARENT_META_KEY];
  const value = typeof meta === "string" ? meta : host?.http?.req?.headers.get("traceparent");
  return typeof value === "string" && TRACEPARENT.test(value.trim()) ? value.trim() : undefined;
}

/** How a call ended, as its entry names it. */
export function resultOutcome(result: CallToolResult, cancelled: boolean): AuditOutcome {
  if (!result.isError) return "ok";
  if (cancelled) return "cancelled";
  const kind = errorKindOf(result)?.kind;
  return kind ? AuditOutcome.catch("tool_error").parse(kind) : "tool_error";
}

/** A failure thrown rather than answered, as its entry names it. */
export const thrownOutcome = (err: unknown, cancelled: boolean): AuditOutcome =>
  cancelled ? "cancelled" : err instanceof ProxyError ? AuditOutcome.catch("unavailable").parse(err.kind) : "unavailable";

/** One call's audit, begun as it starts: `end` records how it ended (awaited before its answer is sent). */
export interface CallAuditing {
  end(tool: string, outcome: AuditOutcome, answer: unknown): Promise<void>;
}

/**
 * Begins the audit of a call of `kind` by the session `who` (nothing when the session keeps no audit). The arguments'
 * hash, when the team asks for one, is computed beside the upstream call, so the end does not wait for it.
 */
export function beginAudit(
  who: { team: string; principal: string },
  audit: SessionAudit | undefined,
  kind: AuditKind,
  host: HostExtra | undefined,
  input: unknown,
  started = Date.now(),
): CallAuditing | undefined {
  if (!audit) return undefined;
  const hash = audit.settings?.hashArguments ? sha256Hex(canonicalJson(input ?? {})) : undefined;
  return {
    end: async (tool, outcome, answer) => {
      const traceparent = traceparentOf(host);
      const client = clientOf(audit, host);
      const sha = hash ? await hash : undefined;
      const entry: AuditEntry = {
        id: auditId(started),
        at: new Date(started).toISOString(),
        kind,
        principal: audit.subject ? subjectPrincipal(audit.subject) : auditPrincipal(who),
        ...(client ? { client } : {}),
        view: audit.view,
        era: audit.era,
        tool: tool.slice(0, 400) || "(no name)",
        outcome,
        ms: Date.now() - started,
        request_bytes: jsonBytes(input),
        answer_bytes: jsonBytes(answer),
        ...(traceparent ? { traceparent } : {}),
        ...(sha ? { arguments_sha256: sha } : {}),
      };
      await audit.recorder.record(who.team, audit.settings?.days, entry);
    },
  };
}

/**
 * The user's answer to a consent question about a call of `tool` (asked at `askedAt`): an `approval` entry, `ok` when
 * allowed, `approval_refused` when not, `timeout` or `cancelled` when no answer came. The call itself, when made, is
 * its own entry.
 */
export async function auditApproval(
  who: { team: string; principal: string },
  audit: SessionAudit | undefined,
  host: HostExtra,
  tool: string,
  outcome: AuditOutcome,
  askedAt: number,
): Promise<void> {
  await beginAudit(who, audit, "approval", host, undefined, askedAt)?.end(tool, outcome, undefined);
}
