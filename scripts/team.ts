// `npm run team -- <command>`: the operator's tool for teams: configs, tokens, secrets, tool pins, OAuth sign-in, the
// audit trail.
// Local state (what `wrangler dev` reads) by default, the deployed namespace with --remote; signed-in users, their
// grants and accounts at OAuth upstreams only through a running Worker's admin API.
import { existsSync, readFileSync } from "node:fs";
import { credentialWarnings } from "../src/config/redact.ts";
import { ServerName, TeamName, secretNames } from "../src/config/schema.ts";
import { parseConfig, type ResolvedConfig } from "../src/config/validate.ts";
import { View } from "../src/config/view.ts";
import {
  AccountParam,
  GrantId,
  UserParam,
  type AccountList,
  type ConnectLink,
  type UserDetail,
  type UserList,
  type UserRemoved,
} from "../src/edge/admin/schemas.ts";
import { urlPolicy } from "../src/lib/url-policy.ts";
import { checkUpstreamUrl, type UrlPolicy } from "../src/lib/url-guard.ts";
import { TeamStore, TeamStoreError } from "../src/store/store.ts";
import { KvError, wranglerKv, type KvTarget } from "./lib/kv.ts";
import { AUDIT_FLAGS, printAudit, type AuditFlags } from "./lib/team-audit.ts";

const USAGE = `usage: npm run team -- <command> [--remote] [--persist-to DIR]
  check <config.json>                validate a config file: its shape and upstream URLs (no state is read)
  put <team> <config.json>           validate (shape, upstream URLs, secret references) and store the config
  get <team>                         print the config (literal header values masked)
  delete <team>                      delete the config
  token <team> [--label TEXT] [--view meta|direct]
                                     mint a token (its sessions' view when the URL names none); the token
                                     is the last line printed
  tokens <team>                      list tokens (id, creation time, view, label)
  revoke <team> <token id>           revoke a token
  secret put <team> <NAME>           store a secret read from standard input (write-only)
  secret list <team>                 list secret names
  secret delete <team> <NAME>        delete a secret
  oauth set <team> --issuer URL --client-id ID --client-secret NAME [--domains a.com,b.com] [--groups g,h]
            [--groups-claim CLAIM] [--scopes openid,email]
                                     the team's OpenID Connect provider for OAuth sign-in (NAME: one of the
                                     team's secrets, holding the client secret)
  oauth get <team>                   print the team's identity provider
  oauth delete <team>                remove it
  oauth users <team> [<user>]        list the members who signed in (id, last and first sign-in, email); with a
                                     user id, that user and their grants (one per host; never a token)
  oauth revoke <team> <user> [--grant ID]
                                     revoke every grant of a user (their hosts must sign in again) and remove
                                     them from the list, with their accounts at OAuth upstreams; with --grant,
                                     that one grant only
  oauth connect <team> <server>      a link (ten minutes, works once) to open in a browser to connect the team's
                                     shared account at an upstream whose entry has auth.mode "shared"; a
                                     connected account is disconnected first
  oauth accounts <team> [<server>]   list the accounts connected at OAuth upstreams ("shared", or a member's
                                     user id), when they were connected and their token expires (never a token)
  oauth disconnect <team> <server> <account>
                                     delete one account's tokens ("shared" or a user id): the next call needs a
                                     new connect
  pins <team>                        list pinned tool definitions and changes waiting for approval
  approve <team> <server> <tool>     approve a changed tool definition
  audit <team> [--since TIME] [--until TIME] [--principal WHO] [--tool NAME] [--outcome OUTCOME] [--limit N]
        [--ndjson]                   the team's audit trail, newest first (TIME: ISO 8601 or YYYY-MM-DD; WHO: an
                                     id, token label or email; NAME: server/tool or server/*; N: entries, default
                                     100); --ndjson prints the entries as JSON lines
Environment: ALLOW_PRIVATE_UPSTREAMS=true allows http and private addresses (local use only); SECRETS_KEY
(else .dev.vars) encrypts local secrets; with --remote, secrets go through the admin API at DYNMCP_URL with
DYNMCP_ADMIN_TOKEN, since only the Worker holds the key. oauth users, revoke, connect, accounts and disconnect,
and audit, always go through the admin API at DYNMCP_URL (a local \`npm run dev\`, e.g. http://localhost:8787, or the
deployment) with DYNMCP_ADMIN_TOKEN (its ADMIN_TOKEN), since grants and upstream accounts are the Worker's.
--help prints this.`;

interface Options extends KvTarget {
  label?: string;
  view?: View;
  /** `oauth revoke --grant`: one grant instead of all of the user's. */
  grant?: string;
  /** `oauth set`'s options, by the IdP config's field names. */
  idp: Record<string, string | string[]>;
  /** `audit`'s filters, and whether it prints NDJSON. */
  audit: AuditFlags;
  ndjson: boolean;
  help: boolean;
  positional: string[];
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { remote: false, help: false, positional: [], idp: {}, audit: {}, ndjson: false };
  const list = (value: string | undefined) => (value ?? "").split(",").map((v) => v.trim()).filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--help" || arg === "-h") opts.help = true;
    else if (arg === "--remote") opts.remote = true;
    else if (arg === "--local") opts.remote = false;
    else if (arg === "--persist-to") opts.persistTo = argv[++i];
    else if (arg === "--label") opts.label = argv[++i];
    else if (arg === "--grant") opts.grant = argv[++i] ?? "";
    else if (arg === "--view") {
      const view = View.safeParse(argv[++i]);
      if (!view.success) fail(`bad --view: ${view.error.issues[0]?.message}`);
      opts.view = view.data;
    }
    else if (arg === "--issuer") opts.idp.issuer = argv[++i] ?? "";
    else if (arg === "--client-id") opts.idp.client_id = argv[++i] ?? "";
    else if (arg === "--client-secret") opts.idp.client_secret = argv[++i] ?? "";
    else if (arg === "--domains") opts.idp.allowed_domains = list(argv[++i]);
    else if (arg === "--groups") opts.idp.allowed_groups = list(argv[++i]);
    else if (arg === "--groups-claim") opts.idp.groups_claim = argv[++i] ?? "";
    else if (arg === "--scopes") opts.idp.scopes = list(argv[++i]);
    else if (arg === "--ndjson") opts.ndjson = true;
    else if ((AUDIT_FLAGS as readonly string[]).includes(arg.slice(2))) opts.audit[arg.slice(2) as keyof AuditFlags] = argv[++i] ?? "";
    else if (arg.startsWith("--")) fail(`unknown option ${arg}\n${USAGE}`);
    else opts.positional.push(arg);
  }
  return opts;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const out = (line: string) => process.stdout.write(`${line}\n`);

function team(name: string | undefined): string {
  if (!name) fail(USAGE);
  const parsed = TeamName.safeParse(name);
  if (!parsed.success) fail(`bad team name ${JSON.stringify(name)}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** SECRETS_KEY from the environment, else from .dev.vars (the key `wrangler dev` uses). */
function secretsKey(): string | undefined {
  if (process.env.SECRETS_KEY) return process.env.SECRETS_KEY;
  if (!existsSync(".dev.vars")) return undefined;
  return /^SECRETS_KEY=(.*)$/m.exec(readFileSync(".dev.vars", "utf8"))?.[1]?.trim();
}

/** The config file, parsed once and its shape validated: its JSON as written (what is stored) and what it means. */
function readConfig(path: string | undefined): { raw: unknown; config: ResolvedConfig } {
  if (!path) fail(USAGE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    fail(`cannot read ${path}: ${(err as Error).message}`);
  }
  const invalid = (errors: string[]) => `${path} is not a valid config:\n${errors.map((e) => `  - ${e}`).join("\n")}`;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    fail(invalid([`(root): not valid JSON: ${(err as Error).message}`]));
  }
  const result = parseConfig(raw);
  if (!result.ok) fail(invalid(result.errors));
  for (const warning of credentialWarnings(raw)) process.stderr.write(`warning: ${warning}\n`);
  const { mode, upstreams } = result.config;
  const lazy = upstreams.filter((u) => u.description !== undefined).length;
  out(`${path}: valid shape (${mode === "single" ? "single-MCP mode" : "config-file mode"}, ${upstreams.length} enabled upstream(s), ${lazy} lazy)`);
  return { raw, config: result.config };
}

/**
 * The upstream URLs `put` would refuse under this policy (the same check, from src/lib/url-guard.ts), each
 * with its JSON path, its origin (never the whole URL: it may carry a key in its query) and why.
 */
function refusedUrls(config: ResolvedConfig, policy: UrlPolicy): string[] {
  const refused: string[] = [];
  for (const upstream of config.upstreams) {
    const verdict = checkUpstreamUrl(upstream.url, policy);
    if (verdict.ok) continue;
    const path = config.mode === "single" ? "url" : `mcp.${upstream.name}.url`;
    let origin = "";
    try {
      const parsed = new URL(upstream.url);
      if (parsed.origin !== "null") origin = ` (${parsed.origin})`;
    } catch {
      // not a URL: the reason says so
    }
    refused.push(`${path}${origin}: ${verdict.reason}`);
  }
  return refused;
}

/** `check`: the shape, then the upstream URLs as `put` would judge them; secret references need the team's state. */
function check(path: string | undefined, policy: UrlPolicy): void {
  const { config } = readConfig(path);
  const refused = refusedUrls(config, policy);
  const lifted = policy.allowPrivate ? " (with ALLOW_PRIVATE_UPSTREAMS=true: http and private addresses allowed, local use only)" : "";
  if (refused.length > 0) {
    const hint = policy.allowPrivate
      ? ""
      : "\n(upstream URLs must be https and public; ALLOW_PRIVATE_UPSTREAMS=true lifts that for local use only)";
    fail(`${path}: put would refuse ${refused.length} upstream URL(s)${lifted}:\n${refused.map((r) => `  - ${r}`).join("\n")}${hint}`);
  }
  out(`${path}: every upstream URL allowed${lifted}`);
  const secrets = [...new Set(config.upstreams.flatMap((u) => Object.values(u.headers).flatMap((v) => secretNames(v))))];
  if (secrets.length > 0) out(`${path}: put checks that the team has the secrets it references: ${secrets.join(", ")}`);
}

const SECRETS_VIA_ADMIN = "with --remote, secrets go through the admin API: set DYNMCP_URL and DYNMCP_ADMIN_TOKEN";
const AUDIT_VIA_ADMIN =
  "the audit trail is read through a running Worker's admin API: set DYNMCP_URL (e.g. http://localhost:8787 for npm run dev, or the deployment) and DYNMCP_ADMIN_TOKEN (its ADMIN_TOKEN)";
const USERS_VIA_ADMIN =
  "users and grants are read through a running Worker's admin API: set DYNMCP_URL (e.g. http://localhost:8787 for npm run dev, or the deployment) and DYNMCP_ADMIN_TOKEN (its ADMIN_TOKEN)";

/**
 * The admin API of a running Worker, for what only the Worker can do (secrets under its key, the OAuth library's
 * grants). A refusal prints the API's own message and issues (its JSON error body), never the admin token.
 */
async function adminApi(method: string, path: string, body?: unknown, unset = SECRETS_VIA_ADMIN): Promise<Response> {
  const base = process.env.DYNMCP_URL;
  const token = process.env.DYNMCP_ADMIN_TOKEN;
  if (!base || !token) fail(unset);
  let res: Response;
  try {
    res = await fetch(new URL(path, base), {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    fail(`cannot reach the admin API at DYNMCP_URL (${new URL(base).origin}): ${cause}`);
  }
  if (!res.ok) {
    const text = await res.text();
    let said = text;
    try {
      const error = JSON.parse(text) as { message?: string; issues?: Array<{ path: string; message: string }> };
      if (typeof error.message === "string") said = [error.message, ...(error.issues ?? []).map((i) => `  - ${i.path}: ${i.message}`)].join("\n");
    } catch {
      // not the API's JSON error (a proxy in front, say): shown as it came
    }
    fail(`admin API ${method} ${path}: HTTP ${res.status}: ${said}`);
  }
  return res;
}

/** `oauth users`: the team's signed-in members, or one member with their grants. */
async function oauthUsers(team: string, user: string | undefined): Promise<void> {
  if (user === undefined) {
    const { users } = (await (await adminApi("GET", `/admin/teams/${team}/users`, undefined, USERS_VIA_ADMIN)).json()) as UserList;
    if (users.length === 0) process.stderr.write(`no member of team ${team} has signed in\n`);
    for (const u of users) out(`${u.id}  last ${u.lastSeen}  first ${u.firstSeen}  ${u.email ?? ""}`.trimEnd());
    return;
  }
  const path = `/admin/teams/${team}/users/${userId(team, user)}`;
  const detail = (await (await adminApi("GET", path, undefined, USERS_VIA_ADMIN)).json()) as UserDetail;
  const who = detail.user ? `last ${detail.user.lastSeen}  first ${detail.user.firstSeen}  ${detail.user.email ?? ""}` : "(not in the user list any more)";
  out(`${detail.id}  ${who}`.trimEnd());
  if (detail.grants.length === 0) out("  no grants: no host holds a token for this user");
  for (const g of detail.grants) {
    const client = g.clientName ? `${g.clientName} (${g.clientId})` : g.clientId;
    out(`  grant ${g.id}  ${client}  scope ${g.scope.join(" ") || "-"}  created ${g.createdAt}${g.expiresAt ? `  expires ${g.expiresAt}` : ""}`);
  }
  if (!detail.complete) out("  (more grants than one answer lists)");
}

/** `oauth revoke`: every grant of a user and their index entry, or one grant. */
async function oauthRevoke(team: string, user: string | undefined, grant: string | undefined): Promise<void> {
  const path = `/admin/teams/${team}/users/${userId(team, user)}`;
  if (grant !== undefined) {
    if (!GrantId.safeParse(grant).success) fail(`bad --grant ${JSON.stringify(grant)}: grant ids are 16 letters, digits, '-' or '_' (see oauth users ${team} <user>)`);
    await adminApi("DELETE", `${path}/grants/${grant}`, undefined, USERS_VIA_ADMIN);
    out(`revoked grant ${grant} of user ${user} of team ${team}`);
    return;
  }
  const removed = (await (await adminApi("DELETE", path, undefined, USERS_VIA_ADMIN)).json()) as UserRemoved;
  const accounts = removed.accountsDeleted ? `; deleted ${removed.accountsDeleted} account(s) at OAuth upstreams` : "";
  out(`revoked ${removed.grantsRevoked} grant(s) of user ${removed.id} of team ${team}${removed.userDeleted ? "; removed from the user list" : ""}${accounts}`);
  if (!removed.complete) out("more grants remain: run the command again");
}

const ACCOUNTS_VIA_ADMIN =
  "accounts at OAuth upstreams are the Worker's (its team index): set DYNMCP_URL (e.g. http://localhost:8787 for npm run dev, or the deployment) and DYNMCP_ADMIN_TOKEN (its ADMIN_TOKEN)";

/** A server name as the admin API takes it (checked here first). */
function server(name: string | undefined): string {
  if (!name) fail(USAGE);
  const parsed = ServerName.safeParse(name);
  if (!parsed.success) fail(`bad server name ${JSON.stringify(name)}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** `oauth connect`: the link an admin opens in a browser to connect the team's shared account at an upstream. */
async function oauthConnect(team: string, serverArg: string | undefined): Promise<void> {
  const name = server(serverArg);
  const link = (await (await adminApi("POST", `/admin/teams/${team}/upstreams/${name}/connect`, undefined, ACCOUNTS_VIA_ADMIN)).json()) as ConnectLink;
  out(`connect link for the shared account of ${name} (team ${team}), valid until ${link.expiresAt} (ten minutes):`);
  out(link.url);
  out(`open it in a browser (it works once: keep it to yourself) and sign in at ${name}'s provider; then oauth accounts ${team} ${name} shows the account`);
}

/** `oauth accounts`: the accounts connected at the team's OAuth upstreams (one server's, or all); never a token. */
async function oauthAccounts(team: string, serverArg: string | undefined): Promise<void> {
  const path = serverArg === undefined ? `/admin/teams/${team}/accounts` : `/admin/teams/${team}/upstreams/${server(serverArg)}/accounts`;
  const { accounts } = (await (await adminApi("GET", path, undefined, ACCOUNTS_VIA_ADMIN)).json()) as AccountList;
  if (accounts.length === 0) process.stderr.write(`no account is connected at ${serverArg === undefined ? "any OAuth upstream" : serverArg} of team ${team}\n`);
  for (const a of accounts) {
    const expiry = a.expiresAt === undefined ? "no expiry given" : `token expires ${a.expiresAt}`;
    out(`${a.server}  ${a.account}  connected ${a.connectedAt}  ${expiry}  ${a.refreshable ? "refreshable" : "not refreshable"}  ${a.issuer}${a.scope ? `  scope ${a.scope}` : ""}`);
  }
}

/** `oauth disconnect`: one account's tokens at one upstream. */
async function oauthDisconnect(team: string, serverArg: string | undefined, account: string | undefined): Promise<void> {
  const name = server(serverArg);
  if (!account) fail(USAGE);
  const parsed = AccountParam.safeParse({ team, server: name, account });
  if (!parsed.success) fail(`bad account ${JSON.stringify(account)}: "shared" or a user id of team ${team} (see oauth accounts ${team} ${name})`);
  await adminApi("DELETE", `/admin/teams/${team}/upstreams/${name}/accounts/${account}`, undefined, ACCOUNTS_VIA_ADMIN);
  out(`disconnected account ${account} from ${name} (team ${team}): its tokens are deleted`);
}

/** A user id as the admin API takes it (checked here first, so a typo is not a round trip). */
function userId(team: string, user: string | undefined): string {
  if (!user) fail(USAGE);
  const parsed = UserParam.safeParse({ team, user });
  if (!parsed.success) fail(`bad user id ${JSON.stringify(user)}: ${parsed.error.issues[0]?.message} (see oauth users ${team})`);
  return user;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const [command, ...rest] = opts.positional;
  if (opts.help || command === "help") {
    out(USAGE);
    return;
  }
  // The policy the Worker applies (src/lib/url-policy.ts), from this process's environment.
  const policy = urlPolicy(process.env);
  const store = new TeamStore(wranglerKv(opts), { secretsKey: secretsKey(), urlPolicy: policy });
  switch (command) {
    case "check":
      check(rest[0], policy);
      return;
    case "put": {
      const name = team(rest[0]);
      const result = await store.putConfig(name, readConfig(rest[1]).raw);
      if (!result.ok) fail(`not stored:\n${result.issues.map((i) => `  - ${i.path}: ${i.message}`).join("\n")}`);
      out(`stored the config of team ${name} (${opts.remote ? "remote" : "local"})`);
      return;
    }
    case "get": {
      const config = await store.getConfig(team(rest[0]));
      if (config === undefined) fail(`team ${rest[0]} has no config`);
      out(JSON.stringify(config, null, 2));
      return;
    }
    case "delete":
      if (!(await store.deleteConfig(team(rest[0])))) fail(`team ${rest[0]} has no config`);
      out(`deleted the config of team ${rest[0]}`);
      return;
    case "token": {
      const name = team(rest[0]);
      const minted = await store.mintToken(name, opts.label, opts.view);
      out(`minted token ${minted.id} for team ${name}; it is shown once, store it now:`);
      out(minted.token);
      return;
    }
    case "tokens":
      for (const t of await store.listTokens(team(rest[0]))) out(`${t.id}  ${t.createdAt}  ${t.view ?? "meta"}  ${t.label ?? ""}`.trimEnd());
      return;
    case "revoke":
      if (!rest[1] || !(await store.revokeToken(team(rest[0]), rest[1]))) fail(`team ${rest[0]} has no token ${rest[1] ?? ""}`);
      out(`revoked token ${rest[1]} of team ${rest[0]}`);
      return;
    case "secret": {
      const [verb, teamArg, secretName] = rest;
      const name = team(teamArg);
      if (verb === "put") {
        if (!secretName) fail(USAGE);
        const value = await readStdin();
        if (value === "") fail("no value on standard input");
        if (opts.remote) await adminApi("PUT", `/admin/teams/${name}/secrets/${secretName}`, { value });
        else await store.putSecret(name, secretName, value);
        out(`stored secret ${secretName} of team ${name}`);
      } else if (verb === "list") {
        const names = opts.remote
          ? ((await (await adminApi("GET", `/admin/teams/${name}/secrets`)).json()) as { secrets: Array<{ name: string }> }).secrets.map((s) => s.name)
          : await store.listSecretNames(name);
        for (const n of names) out(n);
      } else if (verb === "delete") {
        if (!secretName) fail(USAGE);
        if (opts.remote) await adminApi("DELETE", `/admin/teams/${name}/secrets/${secretName}`);
        else if (!(await store.deleteSecret(name, secretName))) fail(`team ${name} has no secret ${secretName}`);
        out(`deleted secret ${secretName} of team ${name}`);
      } else fail(USAGE);
      return;
    }
    case "oauth": {
      const [verb, teamArg, userArg, accountArg] = rest;
      const name = team(teamArg);
      if (verb === "set") {
        const result = await store.putIdp(name, opts.idp);
        if (!result.ok) fail(`not stored:\n${result.issues.map((i) => `  - ${i.path}: ${i.message}`).join("\n")}`);
        out(`stored the identity provider of team ${name} (${opts.remote ? "remote" : "local"})`);
      } else if (verb === "get") {
        const idp = await store.getIdp(name);
        if (idp === undefined) fail(`team ${name} has no identity provider`);
        out(JSON.stringify(idp, null, 2));
      } else if (verb === "delete") {
        if (!(await store.deleteIdp(name))) fail(`team ${name} has no identity provider`);
        out(`removed the identity provider of team ${name}`);
      } else if (verb === "users") await oauthUsers(name, userArg);
      else if (verb === "revoke") await oauthRevoke(name, userArg, opts.grant);
      else if (verb === "connect") await oauthConnect(name, userArg);
      else if (verb === "accounts") await oauthAccounts(name, userArg);
      else if (verb === "disconnect") await oauthDisconnect(name, userArg, accountArg);
      else fail(USAGE);
      return;
    }
    case "pins":
      for (const p of await store.listPins(team(rest[0]))) out(`${p.server}/${p.tool}  ${p.pending ? `changed since ${p.pendingSince ?? "?"}, waiting for approval` : "pinned"}`);
      return;
    case "audit":
      await printAudit(team(rest[0]), opts.audit, opts.ndjson, (path) => adminApi("GET", path, undefined, AUDIT_VIA_ADMIN), out, fail);
      return;
    case "approve":
      if (!rest[1] || !rest[2] || !(await store.approvePin(team(rest[0]), rest[1], rest[2]))) fail("no change of that tool is waiting for approval");
      out(`approved the new definition of ${rest[1]}/${rest[2]}`);
      return;
    default:
      fail(USAGE);
  }
}

try {
  await main();
} catch (err) {
  if (err instanceof KvError || err instanceof TeamStoreError) fail(err.message);
  throw err;
}
