// The admin API's shapes: one zod schema each; request validation and the OpenAPI document both come from them.
import * as z from "zod";
import { ServerName, TeamName } from "../config/schema.ts";
import { View } from "../config/view.ts";
import { SECRET_NAME } from "../security/secrets.ts";
import { DayKey, USAGE_DAYS_KEPT, UsageFigures } from "../session/usage.ts";

export const TeamParam = z.object({ team: TeamName });
export const TokenIdParam = z.object({ team: TeamName, id: z.string().regex(/^[0-9a-f]{16}$/, "token ids are 16 hex digits") });
export const SecretName = z.string().regex(SECRET_NAME, "secret names are letters, digits and _, starting with a letter or _");
export const SecretParam = z.object({ team: TeamName, name: SecretName });
export const UpstreamParam = z.object({ team: TeamName, server: ServerName });
export const SessionCount = z.object({ sessions: z.number().int().describe("Live sessions that took the action.") });
export const PinParam = z.object({ team: TeamName, server: ServerName, tool: z.string().min(1).max(200) });

const TokenView = View.describe(
  'The view sessions of this token get when the MCP URL has no `?view=`: "meta" (discover_tool, use_tool, load_mcp; the default) or "direct" (every allowed tool first-class, for hosts that search tools themselves).',
);

export const TokenCreateBody = z.strictObject({
  label: z.string().trim().min(1).max(100).optional().describe("What the token is for (shown in listings)."),
  view: TokenView.optional(),
});

export const SecretPutBody = z.strictObject({
  value: z.string().min(1).max(16_384).describe("The secret's value; it can never be read back."),
});

export const Issue = z.object({ path: z.string(), message: z.string() }).meta({ id: "Issue" });

export const ErrorBody = z
  .object({
    error: z.string().describe("A stable code: unauthorized, not_found, invalid_json, invalid_body, invalid_config, …"),
    message: z.string(),
    issues: z.array(Issue).optional().describe("What is wrong, with JSON paths."),
  })
  .meta({ id: "Error" });

export const ConfigWritten = z.object({ ok: z.literal(true), warnings: z.array(z.string()) }).meta({ id: "ConfigWritten" });

export const TokenInfo = z
  .object({ id: z.string(), label: z.string().optional(), createdAt: z.string(), view: TokenView.optional() })
  .meta({ id: "TokenInfo" });
export const TokenCreated = TokenInfo.extend({ token: z.string().describe("Shown once: only its hash is stored.") }).meta({
  id: "TokenCreated",
});
export const TokenList = z.object({ tokens: z.array(TokenInfo) });

export const SecretList = z.object({ secrets: z.array(z.object({ name: z.string(), updatedAt: z.string().optional() })) });

export const PinInfo = z
  .object({ server: z.string(), tool: z.string(), hash: z.string(), pending: z.string().optional(), pendingSince: z.string().optional() })
  .meta({ id: "PinInfo" });
export const PinList = z.object({ pins: z.array(PinInfo) });

const DAYS_RULE = `days is a whole number from 1 to ${USAGE_DAYS_KEPT}`;
/** `?days=N` of the usage route: how many UTC days back from today (today included), default 30. */
export const UsageQuery = z.object({
  days: z
    .string()
    .regex(/^\d{1,3}$/, DAYS_RULE)
    .transform(Number)
    .pipe(z.number().min(1, DAYS_RULE).max(USAGE_DAYS_KEPT, DAYS_RULE))
    .optional()
    .describe(`How many UTC days back from today, today included (1–${USAGE_DAYS_KEPT}, default 30).`),
});

/** One day of a team's usage: its figures (the stored shape, src/session/usage.ts) beside the day. */
export const UsageDayFigures = z.object({ day: DayKey.describe("A UTC day, YYYY-MM-DD."), ...UsageFigures.shape }).meta({ id: "UsageDay" });

export const UsageTotals = z
  .object({
    ...UsageFigures.shape,
    sent: z.number().int().min(0).describe("listed + every answer: the tokens the sessions were actually sent."),
    saved: z.number().int().describe("direct − sent (negative when the meta-tools cost more than direct exposure would have)."),
    ratio: z.number().nullable().describe("sent / direct, 4 decimals; null when nothing was reachable."),
  })
  .meta({ id: "UsageTotals" });

export const UsageReport = z
  .object({
    team: z.string(),
    days: z.array(UsageDayFigures).describe("Days with recorded usage in the window, oldest first."),
    totals: UsageTotals,
  })
  .meta({ id: "UsageReport" });

/** A team config as the admin API takes it: validated by the config schema itself. */
export const ConfigBody = z.record(z.string(), z.unknown()).describe("A team config (see /config.schema.json).");
