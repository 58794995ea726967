// The admin API's OpenAPI document, generated from the same zod schemas the routes validate with.
import { createDocument } from "zod-openapi";
import type { z } from "zod";
import { PRODUCT } from "../../lib/product.ts";
import { AuditParams } from "../../team/audit-query.ts";
import {
  AccountList,
  AuditEntryBody,
  AuditPageBody,
  AccountParam,
  ConfigBody,
  ConnectLink,
  ConfigWritten,
  ErrorBody,
  GrantParam,
  PinList,
  PinParam,
  SecretList,
  SecretParam,
  SecretPutBody,
  TeamParam,
  TokenCreateBody,
  TokenCreated,
  TokenIdParam,
  TokenList,
  SessionCount,
  UpstreamParam,
  UsageQuery,
  UsageReport,
  UserDetail,
  UserList,
  UserParam,
  UserRemoved,
} from "./schemas.ts";
import { IdpConfig } from "../../config/idp.ts";

const json = (schema: z.ZodType, description: string) => ({ description, content: { "application/json": { schema } } });
const errors = {
  "400": json(ErrorBody, "The request is malformed or does not validate."),
  "401": json(ErrorBody, "Missing or wrong admin token."),
  "404": json(ErrorBody, "No such team item."),
  "409": json(ErrorBody, "The upstream's entry does not allow this (a connect link for an entry without OAuth, or a per_user one)."),
  "413": json(ErrorBody, "The body is over 1 MiB."),
  "415": json(ErrorBody, "The body is not application/json."),
  "503": json(
    ErrorBody,
    "The admin API is off (no ADMIN_TOKEN); for secrets, no SECRETS_KEY is set; for grants, no OAUTH_KV binding (or a plain-http base URL without PUBLIC_URL); for connect links, no SESSION_KEY or SECRETS_KEY.",
  ),
};
const body = (schema: z.ZodType) => ({ required: true, content: { "application/json": { schema } } });

/** A team's config, identity provider and secrets. */
const configPaths = {
  "/admin/teams/{team}/config": {
    put: { summary: "Create or replace a team's config (the accounts and registration of an OAuth upstream it drops, takes auth from or moves to another URL are deleted)", requestParams: { path: TeamParam }, requestBody: body(ConfigBody), responses: { "200": json(ConfigWritten, "Stored."), ...errors } },
    get: { summary: "Read a team's config (literal header values masked)", requestParams: { path: TeamParam }, responses: { "200": json(ConfigBody, "The config."), ...errors } },
    delete: { summary: "Delete a team's config, with every account and registration at its OAuth upstreams", requestParams: { path: TeamParam }, responses: { "204": { description: "Deleted." }, ...errors } },
  },
  "/admin/teams/{team}/oauth": {
    put: {
      summary: "Set the team's OpenID Connect provider for OAuth sign-in (the client secret is named, never given)",
      requestParams: { path: TeamParam },
      requestBody: body(IdpConfig),
      responses: { "200": json(IdpConfig, "Stored, defaults filled in."), ...errors },
    },
    get: { summary: "Read the team's identity provider", requestParams: { path: TeamParam }, responses: { "200": json(IdpConfig, "The provider."), ...errors } },
    delete: { summary: "Remove the team's identity provider", requestParams: { path: TeamParam }, responses: { "204": { description: "Deleted." }, ...errors } },
  },
  "/admin/teams/{team}/secrets": {
    get: { summary: "List a team's secret names (never values)", requestParams: { path: TeamParam }, responses: { "200": json(SecretList, "The names."), ...errors } },
  },
  "/admin/teams/{team}/secrets/{name}": {
    put: { summary: "Set a secret (write-only)", requestParams: { path: SecretParam }, requestBody: body(SecretPutBody), responses: { "204": { description: "Stored." }, ...errors } },
    delete: { summary: "Delete a secret", requestParams: { path: SecretParam }, responses: { "204": { description: "Deleted." }, ...errors } },
  },
};

/** Signed-in members and their grants. */
const userPaths = {
  "/admin/teams/{team}/users": {
    get: { summary: "List the members who signed in through the team's identity provider (never a token)", requestParams: { path: TeamParam }, responses: { "200": json(UserList, "The users."), ...errors } },
  },
  "/admin/teams/{team}/users/{user}": {
    get: {
      summary: "A signed-in user and their grants (one per host that signed them in; never a token)",
      requestParams: { path: UserParam },
      responses: { "200": json(UserDetail, "The user's index entry and grants."), ...errors },
    },
    delete: {
      summary: "Revoke every grant of a user (their access and refresh tokens stop working), delete their accounts at OAuth upstreams and their index entry",
      requestParams: { path: UserParam },
      responses: { "200": json(UserRemoved, "What was removed."), ...errors },
    },
  },
  "/admin/teams/{team}/users/{user}/grants/{grant}": {
    delete: { summary: "Revoke one grant of a user, with its tokens", requestParams: { path: GrantParam }, responses: { "204": { description: "Revoked." }, ...errors } },
  },
};

/** Accounts at OAuth upstreams and the shared account's connect link. */
const accountPaths = {
  "/admin/teams/{team}/accounts": {
    get: {
      summary: "List the accounts connected at the team's OAuth upstreams, every server's (never a token)",
      requestParams: { path: TeamParam },
      responses: { "200": json(AccountList, "The accounts, by server and account."), ...errors },
    },
  },
  "/admin/teams/{team}/upstreams/{server}/accounts": {
    get: {
      summary: "List the accounts connected at one OAuth upstream: the shared one, or each member's (never a token)",
      requestParams: { path: UpstreamParam },
      responses: { "200": json(AccountList, "The accounts."), ...errors },
    },
  },
  "/admin/teams/{team}/upstreams/{server}/accounts/{account}": {
    delete: {
      summary: 'Disconnect one account ("shared" or a user id) from an OAuth upstream: its tokens are deleted, the next call needs a new connect',
      requestParams: { path: AccountParam },
      responses: { "204": { description: "Deleted." }, ...errors },
    },
  },
  "/admin/teams/{team}/upstreams/{server}/connect": {
    post: {
      summary: 'A link (ten minutes) to open in a browser to connect the team\'s shared account at an upstream with auth.mode "shared"',
      requestParams: { path: UpstreamParam },
      responses: { "200": json(ConnectLink, "The link and when it expires."), ...errors },
    },
  },
};

/** Tokens and tool pins. */
const tokenPaths = {
  "/admin/teams/{team}/tokens": {
    post: { summary: "Mint a token (shown once)", requestParams: { path: TeamParam }, requestBody: body(TokenCreateBody), responses: { "201": json(TokenCreated, "Minted."), ...errors } },
    get: { summary: "List a team's tokens (ids, labels, creation times)", requestParams: { path: TeamParam }, responses: { "200": json(TokenList, "The tokens."), ...errors } },
  },
  "/admin/teams/{team}/tokens/{id}": {
    delete: { summary: "Revoke a token", requestParams: { path: TokenIdParam }, responses: { "204": { description: "Revoked." }, ...errors } },
  },
  "/admin/teams/{team}/pins": {
    get: { summary: "List pinned tool definitions and changes waiting for approval", requestParams: { path: TeamParam }, responses: { "200": json(PinList, "The pins."), ...errors } },
  },
  "/admin/teams/{team}/pins/{server}/{tool}/approve": {
    post: { summary: "Approve a changed tool definition", requestParams: { path: PinParam }, responses: { "204": { description: "Approved." }, ...errors } },
  },
};

/** Live sessions and token usage. */
const sessionPaths = {
  "/admin/teams/{team}/sessions/reload": {
    post: { summary: "Have every live session of the team take the current config at its next request", requestParams: { path: TeamParam }, responses: { "200": json(SessionCount, "Sessions told."), ...errors } },
  },
  "/admin/teams/{team}/upstreams/{server}/reconnect": {
    post: { summary: "Reconnect one upstream in every live session of the team", requestParams: { path: UpstreamParam }, responses: { "200": json(SessionCount, "Sessions reconnected."), ...errors } },
  },
  "/admin/teams/{team}/usage": {
    get: {
      summary: "Token accounting of the team's sessions per UTC day: what direct exposure would have cost, what they were sent",
      requestParams: { path: TeamParam, query: UsageQuery },
      responses: { "200": json(UsageReport, "The days with usage, and their totals."), ...errors },
    },
  },
  "/admin/teams/{team}/audit": {
    get: {
      summary: "The team's audit trail, newest first: every tool call, load and admin action (never arguments, results or secrets)",
      requestParams: { path: TeamParam, query: AuditParams },
      responses: {
        "200": {
          description: "A page of entries and the cursor of the next (`format=ndjson`: one entry per line, the cursor in `x-next-cursor`).",
          content: { "application/json": { schema: AuditPageBody }, "application/x-ndjson": { schema: AuditEntryBody } },
        },
        ...errors,
      },
    },
  },
};

let document: ReturnType<typeof createDocument> | undefined;

export function adminOpenApi(): ReturnType<typeof createDocument> {
  document ??= createDocument({
    openapi: "3.1.0",
    info: {
      title: `${PRODUCT.name} admin API`,
      version: PRODUCT.version,
      description:
        "Team configs, identity providers, signed-in users and their grants, accounts at OAuth upstreams, tokens, secrets, tool pins, token usage and the audit trail. Every route takes `Authorization: Bearer <ADMIN_TOKEN>`.",
    },
    components: { securitySchemes: { admin: { type: "http", scheme: "bearer" } } },
    security: [{ admin: [] }],
    paths: {
      ...configPaths,
      ...userPaths,
      ...accountPaths,
      ...tokenPaths,
      ...sessionPaths,
    },
  });
  return document;
}
