// The admin API's usage route: the token accounting of a team's sessions per UTC day (what direct exposure would have
// cost, what they were sent), their totals and what those mean, and each principal's when asked.
import { Hono } from "hono";
import type { z } from "zod";
import { kvKeys } from "../../config/keys.ts";
import { formatIssues } from "../../config/validate.ts";
import type { UsageDay, UsageFigures } from "../../lib/env.ts";
import { addFigures, emptyFigures } from "../../session/usage.ts";
import { isResponse, params, problem, type AdminEnv } from "./route-context.ts";
import { TeamParam, UsageQuery, type UsageReport, type UsageTotals } from "./schemas.ts";

/** Days the usage route answers when `?days=` is not given (the dashboard's overview shows as many). */
export const USAGE_DEFAULT_DAYS = 30;

export const usageRoutes = new Hono<AdminEnv>();

/** Figures with what they mean: sent, saved, ratio (a day's too, on the dashboard's overview). */
export function totalsOf(sum: UsageFigures): z.infer<typeof UsageTotals> {
  const sent = sum.listed + sum.answers.lookups + sum.answers.searches + sum.answers.loads + sum.answers.executes;
  const ratio = sum.direct === 0 ? null : Math.round((sent / sum.direct) * 10_000) / 10_000;
  return { ...sum, sent, saved: sum.direct - sent, ratio };
}

/** The usage answer: each day's figures, their sum and its meaning, and (when asked) each principal's (the dashboard's overview shows the same). */
export function usageReport(team: string, days: readonly UsageDay[], principals?: Array<{ principal: string; figures: UsageFigures }>): z.infer<typeof UsageReport> {
  const sum = days.reduce((total, d) => addFigures(total, d.figures), emptyFigures());
  return {
    team,
    days: days.map((d) => ({ day: d.day, ...d.figures })),
    totals: totalsOf(sum),
    ...(principals ? { principals: principals.map((p) => ({ principal: p.principal, totals: totalsOf(p.figures) })) } : {}),
  };
}

usageRoutes.get("/teams/:team/usage", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  const query = UsageQuery.safeParse(c.req.query());
  if (!query.success) return problem(c, 400, "invalid_query", "The query is not valid.", formatIssues(query.error));
  if ((await c.env.TEAMS.get(kvKeys.config(p.team))) === null) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  const index = c.env.TEAM_INDEX.getByName(p.team);
  const window = query.data.days ?? USAGE_DEFAULT_DAYS;
  const [days, principals] = await Promise.all([index.usage(window), query.data.by === "principal" ? index.usageByPrincipal(window) : undefined]);
  return c.json(usageReport(p.team, days, principals));
});
