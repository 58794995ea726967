// What every admin route reads and answers with: its path parameters and JSON body, checked by their zod schemas (a
// bad one is a 400, 413 or 415 that says which), the team store over TEAMS, the problem answers, and telling a team's
// 2026 listen streams that its lists may have changed.
import type { Context } from "hono";
import type { z } from "zod";
import { formatIssues } from "../../config/validate.ts";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { readLimitedText } from "../../lib/request-body.ts";
import { urlPolicy } from "../../lib/url-policy.ts";
import { bindingKv } from "../../store/binding-kv.ts";
import { TeamStore } from "../../store/store.ts";
import { adminEntry, type AdminAction } from "../../views/audit-entry.ts";

export type AdminEnv = { Bindings: Env };
export type AdminContext = Context<AdminEnv>;

const ADMIN_BODY_LIMIT = 1024 * 1024;

/** A refusal: the status, a machine-readable `error`, a sentence, and (for a body or path that does not validate) its issues. */
export const problem = (c: AdminContext, status: 400 | 404 | 409 | 413 | 415 | 503, error: string, message: string, issues?: Array<{ path: string; message: string }>) =>
  c.json({ error, message, ...(issues ? { issues } : {}) }, status);

/** The team store over TEAMS, its URL policy the request's. */
export function teamStore(env: Env, request: Request): TeamStore {
  return new TeamStore(bindingKv(env.TEAMS), { secretsKey: env.SECRETS_KEY, urlPolicy: urlPolicy(env, new URL(request.url)) });
}

export const store = (c: Pick<AdminContext, "env" | "req">): TeamStore => teamStore(c.env, c.req.raw);

/** Path parameters, validated by their schema; a bad one is a 400 that says which. */
export function params<S extends z.ZodType>(c: AdminContext, schema: S): z.infer<S> | Response {
  const parsed = schema.safeParse(c.req.param());
  if (parsed.success) return parsed.data;
  return problem(c, 400, "invalid_path", "The path is not valid.", formatIssues(parsed.error));
}

/** The JSON body, size-limited, validated by its schema (or only parsed, for configs). */
export async function jsonBody<S extends z.ZodType>(c: AdminContext, schema?: S): Promise<{ value: z.infer<S> } | Response> {
  if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("application/json")) {
    return problem(c, 415, "unsupported_media_type", "Send the body as application/json.");
  }
  const text = await readLimitedText(c.req.raw, ADMIN_BODY_LIMIT);
  if (text === undefined) return problem(c, 413, "too_large", `The body is over ${ADMIN_BODY_LIMIT} bytes.`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return problem(c, 400, "invalid_json", "The body is not valid JSON.");
  }
  if (!schema) return { value: raw as z.infer<S> };
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  return problem(c, 400, "invalid_body", "The body does not validate.", formatIssues(parsed.error));
}

export const isResponse = (v: unknown): v is Response => v instanceof Response;

/**
 * Tells the team's 2026-era listen streams that its lists may have changed (discover_tool's description in tools/list
 * carries the team's catalog). Only this team's streams hear it: they live in its index object. Best-effort: a
 * failure to tell is logged, and the admin's change stands.
 */
export async function listsChanged(env: Pick<Env, "TEAM_INDEX">, team: string): Promise<void> {
  try {
    await env.TEAM_INDEX.getByName(team).listsChanged({ tools: true, prompts: true, resources: true });
  } catch (err) {
    log({ event: "unhandled", error: `listen streams of ${team} not told: ${err instanceof Error ? err.message : String(err)}` });
  }
}

/**
 * An admin action: its `admin` log line, and one entry (kind `admin`) of the team's audit trail, with its own `audit`
 * log line. A trail that cannot take it is logged; the action stands.
 */
export async function adminAction(env: Pick<Env, "TEAM_INDEX">, action: AdminAction, request?: Request): Promise<void> {
  log({ event: "admin", ...action });
  const entry = adminEntry(action, request?.headers.get("traceparent")?.trim());
  log({ event: "audit", team: action.team, ...entry });
  try {
    await env.TEAM_INDEX.getByName(action.team).appendAudit(action.team, [entry]);
  } catch (err) {
    log({ event: "unhandled", error: `admin action not added to the audit trail of ${action.team}: ${err instanceof Error ? err.message : String(err)}` });
  }
}
