// The admin API's shapes: one zod schema each; request validation and the OpenAPI document both come from them.
import * as z from "zod";
import { ServerName, TeamName } from "../../config/schema.ts";
import { View } from "../../config/view.ts";
import { UserRecord } from "../../config/keys.ts";
import { USER_ID } from "../../auth/user.ts";
import { SECRET_NAME } from "../../lib/secrets.ts";
import { DayKey, USAGE_DAYS_KEPT, UsageFigures } from "../../session/usage.ts";
import { AuditEntry } from "../../views/audit-entry.ts";

export const TeamParam = z.object({ team: TeamName });
export const TokenIdParam = z.object({ team: TeamName, id: z.string().regex(/^[0-9a-f]{16}$/, "token ids are 16 hex digits") });
export const SecretName = z.string().regex(SECRET_NAME, "secret names are letters, digits and _, starting with a letter or _");
export const SecretParam = z.object({ team: TeamName, name: SecretName });
export const UpstreamParam = z.object({ team: TeamName, server: ServerName });
export const SessionCount = z.object({ sessions: z.number().int().describe("Live sessions that took the action.") });
export const PinParam = z.object({ team: TeamName, server: ServerName, tool: z.string().min(1).max(200) });

/** A signed-in user's id (src/auth/user.ts): `<team>.<22 base64url characters>`; only the path's team's users pass. */
export const UserId = z.string().regex(USER_ID, "user ids are <team>.<22 base64url characters>");
const ownUser = (p: { team: string; user: string }) => p.user.startsWith(`${p.team}.`);
const OTHER_TEAM = { path: ["user"], message: "the user id is not one of this team's (it starts with its team's name)" };
export const UserParam = z.object({ team: TeamName, user: UserId }).refine(ownUser, OTHER_TEAM);
/** The OAuth library's grant ids: 16 characters of its random alphabet (A–Z, a–z, 0–9, '-', '_'). */
export const GrantId = z.string().regex(/^[A-Za-z0-9_-]{16}$/, "grant ids are 16 letters, digits, '-' or '_'");
export const GrantParam = z.object({ team: TeamName, user: UserId, grant: GrantId }).refine(ownUser, OTHER_TEAM);
/**
 * An upstream account (issue 16, docs/oauth.md 3.3): "shared" (the team's one account, connected by an admin) or the
 * user id of the member who connected their own; a user id must be the path's team's.
 */
export const AccountName = z.union([z.literal("shared"), UserId]);
export const AccountParam = z
  .object({ team: TeamName, server: ServerName, account: AccountName })
  .refine((p) => p.account === "shared" || p.account.startsWith(`${p.team}.`), { path: ["account"], message: OTHER_TEAM.message });

const TokenView = View.describe(
  'The view sessions of this token get when the MCP URL has no `?view=` (without one: the team config\'s `view`, else "meta"): "meta" (discover_tool, use_tool, load_mcp), "direct" (every allowed tool first-class, for hosts that search tools themselves) or "code" (search, describe, execute: one program calls many tools in a sandbox).',
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

/** A member who signed in (the team's user index): never a token, only who and when. */
export const UserInfo = z
  .object({ id: z.string().describe("The user id: <team>.<22 base64url characters of SHA-256 of the issuer and subject>."), ...UserRecord.shape })
  .meta({ id: "UserInfo" });
export const UserList = z.object({ users: z.array(UserInfo) });
export type UserList = z.infer<typeof UserList>;

/** One of a user's grants (one per host that signed them in), as the OAuth library summarises it: no token, no props. */
export const GrantInfo = z
  .object({
    id: z.string(),
    clientId: z.string(),
    clientName: z.string().optional().describe("The client's registered name, when it has one."),
    scope: z.array(z.string()),
    createdAt: z.string().describe("ISO time."),
    expiresAt: z.string().optional().describe("ISO time; absent when the grant does not expire by itself."),
  })
  .meta({ id: "GrantInfo" });
export type GrantInfo = z.infer<typeof GrantInfo>;

export const UserDetail = z
  .object({
    id: z.string(),
    user: UserInfo.omit({ id: true }).optional().describe("The index entry; absent when only grants are left."),
    grants: z.array(GrantInfo),
    complete: z.boolean().describe("False when the user has more grants than one answer lists."),
  })
  .meta({ id: "UserDetail" });
export type UserDetail = z.infer<typeof UserDetail>;

export const UserRemoved = z
  .object({
    id: z.string(),
    grantsRevoked: z.number().int().min(0).describe("Grants revoked, with their access and refresh tokens."),
    userDeleted: z.boolean().describe("Whether the index entry was deleted (only once no grant is left)."),
    complete: z.boolean().describe("False when grants remain (more than one call revokes): call again."),
    accountsDeleted: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("The user's own accounts at OAuth upstreams deleted, with their tokens; absent when they had none."),
  })
  .meta({ id: "UserRemoved" });
export type UserRemoved = z.infer<typeof UserRemoved>;

/**
 * An account connected at an OAuth upstream (the team index's credential vault), as the admin sees it: whose, where and
 * until when; never a token or a client secret.
 */
export const AccountInfo = z
  .object({
    server: z.string(),
    account: z.string().describe('"shared" (the team\'s one account, connected by an admin) or the user id of the member who connected it.'),
    issuer: z.string().describe("The upstream's authorization server."),
    resource: z.string().describe("The entry's URL the tokens were granted for; a changed URL needs a new connect."),
    scope: z.string().optional().describe("The scopes granted, space-separated, when the server said."),
    expiresAt: z.string().optional().describe("ISO time the access token expires; absent when the server did not say."),
    connectedAt: z.string().describe("ISO time."),
    refreshable: z.boolean().describe("Whether the proxy holds a refresh token (it renews the access token ahead of expiry)."),
  })
  .meta({ id: "AccountInfo" });
export type AccountInfo = z.infer<typeof AccountInfo>;
export const AccountList = z.object({ accounts: z.array(AccountInfo) }).meta({ id: "AccountList" });
export type AccountList = z.infer<typeof AccountList>;

/** A link an admin opens in a browser to connect the team's shared account at an OAuth upstream. */
export const ConnectLink = z
  .object({
    url: z.string().describe("<base>/t/<team>/connect/<server>?h=<handle>: open it in a browser, sign in at the upstream."),
    expiresAt: z.string().describe("ISO time; the link works for ten minutes."),
  })
  .meta({ id: "ConnectLink" });
export type ConnectLink = z.infer<typeof ConnectLink>;

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
  by: z.literal("principal").optional().describe("`principal`: also each principal's totals over the window (a team token or a signed-in member)."),
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
    principals: z
      .array(z.object({ principal: z.string().describe("`t:<token id>` or `u:<user id>`."), totals: UsageTotals }))
      .optional()
      .describe("With ?by=principal: each principal's totals over the window, in principal order."),
  })
  .meta({ id: "UsageReport" });

/** One entry of a team's audit trail (the shape sessions write: src/views/audit-entry.ts). */
export const AuditEntryBody = AuditEntry.meta({ id: "AuditEntry" });

export const AuditPageBody = z
  .object({
    entries: z.array(AuditEntryBody).describe("Newest first."),
    next: z.string().nullable().describe("The cursor of the next page (pass it as `cursor`); null when there is no more."),
  })
  .meta({ id: "AuditPage" });

/** A team config as the admin API takes it: validated by the config schema itself. */
export const ConfigBody = z.record(z.string(), z.unknown()).describe("A team config (see /config.schema.json).");
