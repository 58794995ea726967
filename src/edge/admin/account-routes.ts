// The admin API's routes for accounts at OAuth upstreams (docs/oauth.md 3.3 and 3.4): listed (never a token),
// disconnected, and (for a shared entry) the link that connects one. The credentials live sealed in the team's index
// object (src/team/credential-vault.ts), which answers only what may be shown of them; the link itself is served by
// src/edge/oauth/upstream-connect.ts.
import { Hono } from "hono";
import { mintConnectHandle } from "../../auth/connect-link.ts";
import { loadTeamConfig } from "../../config/load.ts";
import { SINGLE_UPSTREAM } from "../../config/validate.ts";
import type { CredentialInfo } from "../../lib/env.ts";
import { publicBase } from "../../lib/public-url.ts";
import { adminAction, isResponse, params, problem, type AdminContext, type AdminEnv } from "./route-context.ts";
import { AccountParam, TeamParam, UpstreamParam, type AccountInfo, type ConnectLink } from "./schemas.ts";

export const accountRoutes = new Hono<AdminEnv>();

const accountInfo = (c: CredentialInfo): AccountInfo => ({
  server: c.server,
  account: c.account,
  issuer: c.issuer,
  resource: c.resource,
  ...(c.scope === undefined ? {} : { scope: c.scope }),
  ...(c.expiresAt === undefined ? {} : { expiresAt: new Date(c.expiresAt).toISOString() }),
  connectedAt: c.connectedAt,
  refreshable: c.refreshable,
});

/** The team's accounts (one server's, or all) as the admin sees them, by server then account. */
async function listAccounts(c: AdminContext, team: string, server?: string): Promise<AccountInfo[]> {
  const listed = await c.env.TEAM_INDEX.getByName(team).listCredentials(team, server);
  const order = (a: CredentialInfo, b: CredentialInfo) => (a.server === b.server ? (a.account < b.account ? -1 : 1) : a.server < b.server ? -1 : 1);
  return listed.sort(order).map(accountInfo);
}

accountRoutes.get("/teams/:team/accounts", async (c) => {
  const p = params(c, TeamParam);
  if (isResponse(p)) return p;
  return c.json({ accounts: await listAccounts(c, p.team) });
});

accountRoutes.get("/teams/:team/upstreams/:server/accounts", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  return c.json({ accounts: await listAccounts(c, p.team, p.server) });
});

accountRoutes.delete("/teams/:team/upstreams/:server/accounts/:account", async (c) => {
  const p = params(c, AccountParam);
  if (isResponse(p)) return p;
  const deleted = await c.env.TEAM_INDEX.getByName(p.team).deleteCredentials(p.team, { server: p.server, account: p.account });
  await adminAction(c.env, { action: "upstream.account.delete", team: p.team, target: `${p.server}/${p.account}`, outcome: deleted > 0 ? "ok" : "refused" }, c.req.raw);
  return deleted > 0 ? c.body(null, 204) : problem(c, 404, "not_found", `Server ${p.server} of team ${p.team} has no account ${p.account}.`);
});

/**
 * A connect link for the team's shared account at an OAuth upstream: `<base>/t/<team>/connect/<server>?h=<handle>`,
 * working for ten minutes, for an admin to open in a browser. Only an entry with `auth.mode: "shared"` has such an
 * account; a per_user entry's members get their own link from the tool result of their first call.
 */
accountRoutes.post("/teams/:team/upstreams/:server/connect", async (c) => {
  const p = params(c, UpstreamParam);
  if (isResponse(p)) return p;
  const loaded = await loadTeamConfig(c.env.TEAMS, p.team);
  if (loaded === undefined) return problem(c, 404, "not_found", `Team ${p.team} has no config.`);
  const entry = loaded.ok ? loaded.config.upstreams.find((u) => u.name === p.server) : undefined;
  if (entry === undefined) {
    const single = loaded.ok && loaded.config.mode === "single" ? ` (a single-MCP config's server is named ${SINGLE_UPSTREAM})` : "";
    return problem(c, 404, "not_found", `Team ${p.team} has no enabled, valid server ${p.server}${single}.`);
  }
  if (entry.auth === undefined) {
    return problem(c, 409, "not_oauth", `Server ${p.server} of team ${p.team} does not sign in with OAuth: give its entry auth: { "type": "oauth", "mode": "shared" } first.`);
  }
  if (entry.auth.mode !== "shared") {
    return problem(
      c,
      409,
      "per_user",
      `Server ${p.server} of team ${p.team} is per_user: each member connects their own account from the link their first call's tool result gives them; there is no shared account to connect.`,
    );
  }
  if (!c.env.SESSION_KEY) return problem(c, 503, "connect_unavailable", "Connect links are signed with SESSION_KEY, which is not set.");
  if (!c.env.SECRETS_KEY) return problem(c, 503, "secrets_disabled", "Upstream accounts are stored encrypted under SECRETS_KEY, which is not set.");
  const { handle, expiresAt } = await mintConnectHandle(c.env.SESSION_KEY, p.team, p.server, "shared");
  await adminAction(c.env, { action: "upstream.connect", team: p.team, target: p.server, outcome: "ok" }, c.req.raw);
  const link: ConnectLink = { url: `${publicBase(c.env, c.req.raw)}/t/${p.team}/connect/${p.server}?h=${handle}`, expiresAt: expiresAt.toISOString() };
  return c.json(link);
});
