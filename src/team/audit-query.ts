// Pure: what a read of a team's audit trail may ask, and its cursor. Pages go newest first, so a cursor is the
// position (time and id) of the last entry a page held: the next page starts just before it, and entries written
// meanwhile (all newer) neither shift nor repeat what the pages after it hold.
import * as z from "zod";
import type { AuditQuery } from "../lib/audit-types.ts";
import { base64url, fromBase64url } from "../lib/bytes.ts";
import { AUDIT_ID, AuditOutcome } from "../views/audit-entry.ts";

/** Entries a page holds when the read names no limit, and the most it may ask. */
export const AUDIT_LIMIT = { default: 100, max: 1000 } as const;

/** Where a page ended: the last entry's time (ms) and id. */
const CursorShape = z.strictObject({ at: z.number().int().nonnegative(), id: z.string().regex(AUDIT_ID) });
export type AuditCursor = z.infer<typeof CursorShape>;

export const encodeAuditCursor = (cursor: AuditCursor): string => base64url(new TextEncoder().encode(JSON.stringify(cursor)));

/** A cursor this module wrote, or undefined for anything else. */
export function decodeAuditCursor(text: string): AuditCursor | undefined {
  try {
    const parsed = CursorShape.safeParse(JSON.parse(new TextDecoder().decode(fromBase64url(text))));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const INSTANT_RULE = "an ISO 8601 time (2026-11-28T16:00:00Z) or a UTC day (2026-11-28)";
/** A point in time as the admin API and the CLI take it: an ISO 8601 time with its offset, or a UTC day (its start). */
const Instant = z
  .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: `must be ${INSTANT_RULE}` })
  .transform((text) => Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text));

const LIMIT_RULE = `limit is a whole number from 1 to ${AUDIT_LIMIT.max}`;

/** The admin API's query of `GET /admin/teams/<team>/audit` (the OpenAPI document is generated from it). */
export const AuditParams = z
  .strictObject({
    since: Instant.optional().describe(`Entries at or after this time: ${INSTANT_RULE}.`),
    until: Instant.optional().describe(`Entries before this time: ${INSTANT_RULE}.`),
    principal: z.string().min(1).max(400).optional().describe("Whose entries: a token's or member's id, a token's label, or a member's email."),
    tool: z
      .string()
      .min(1)
      .max(400)
      .optional()
      .describe("One tool (`server/tool`), or every tool of a server and its loads (`server/*`), or an admin action (`admin/token.mint`)."),
    outcome: AuditOutcome.optional().describe("Only entries that ended so (`ok`, `tool_error`, `denied`, `timeout`, …)."),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, LIMIT_RULE)
      .transform(Number)
      .pipe(z.number().min(1, LIMIT_RULE).max(AUDIT_LIMIT.max, LIMIT_RULE))
      .optional()
      .describe(`Entries in one page (1–${AUDIT_LIMIT.max}, default ${AUDIT_LIMIT.default}).`),
    cursor: z
      .string()
      .max(200)
      .transform((text, ctx) => {
        const cursor = decodeAuditCursor(text);
        if (!cursor) ctx.addIssue({ code: "custom", message: "not a cursor of this API: pass the `next` of a page as it came" });
        return cursor ?? z.NEVER;
      })
      .optional()
      .describe("The `next` of the page before."),
    format: z.enum(["json", "ndjson"]).optional().describe("`ndjson`: one entry per line, for export (the next cursor in the `x-next-cursor` header)."),
  })
  .refine((q) => q.since === undefined || q.until === undefined || q.since < q.until, { path: ["until"], message: "until must be after since" });

/** What the team's index is asked for, from the admin API's query. */
export function auditQuery(params: z.output<typeof AuditParams>): AuditQuery {
  const { format: _format, limit, ...filters } = params;
  const query: AuditQuery = { limit: limit ?? AUDIT_LIMIT.default };
  for (const [key, value] of Object.entries(filters)) if (value !== undefined) Object.assign(query, { [key]: value });
  return query;
}

/** A tool filter read as SQL bounds: one name exactly, or a server's every tool (`server/*`) and its loads (`server`). */
export function toolFilter(tool: string): { exact: string } | { server: string } {
  return tool.endsWith("/*") ? { server: tool.slice(0, -2) } : { exact: tool };
}
