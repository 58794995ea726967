// The admin API's audit route: a team's audit trail (every tool call, load and admin action, as its index keeps it:
// src/team/audit-trail.ts), newest first, filtered and paged, as JSON or as NDJSON for export.
import { Hono } from "hono";
import { formatIssues } from "../../config/validate.ts";
import { AuditParams, auditQuery } from "../../team/audit-query.ts";
import { isResponse, params, problem, type AdminEnv } from "./route-context.ts";
import { TeamParam } from "./schemas.ts";

export const auditRoutes = new Hono<AdminEnv>();

// A deleted team's trail stays readable (its deletion is one of its entries), so no config is needed here.
auditRoutes.get("/teams/:team/audit", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const query = AuditParams.safeParse(c.req.query());
  if (!query.success) return problem(c, 400, "invalid_query", "The query is not valid.", formatIssues(query.error));
  const page = await c.env.TEAM_INDEX.getByName(p.team).readAudit(p.team, auditQuery(query.data));
  if (query.data.format === "ndjson") {
    const headers: Record<string, string> = { "content-type": "application/x-ndjson; charset=utf-8" };
    if (page.next) headers["x-next-cursor"] = page.next;
    return new Response(page.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""), { headers });
  }
  return c.json({ entries: page.entries, next: page.next ?? null });
});
