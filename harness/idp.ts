// A team's OpenID Connect provider on loopback for tests of the proxy's sign-in (issue 16, docs/oauth.md 3.5):
// oidc-provider 9 with a fixed list of accounts (email, email_verified, groups), one confidential client registered
// up front, PKCE S256, and the account's email and groups in the ID token. Its sign-in page is a plain HTML form
// that a browser can fill; `login()` drives the same form over HTTP with a cookie jar, so tests need no browser.
// Node only (oidc-provider is ESM, needs Node 22 LTS or later): never imported by src/.
import { generateKeyPair, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import Provider, { type Account, type Adapter, type AdapterPayload, type Interaction } from "oidc-provider";

/** A user of the provider. `sub` is also what is typed into the sign-in form. */
export interface IdpAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  groups?: string[];
}

export interface IdpOptions {
  /** Who can sign in; by default {@link DEFAULT_ACCOUNTS}. */
  accounts?: IdpAccount[];
  /** The one registered client; by default `dynmcp-proxy` with a fixed test secret. */
  clientId?: string;
  clientSecret?: string;
  /**
   * Where the client may be sent back to (exact match). Only the caller knows its callback; the default is for tests
   * that never follow the redirect (`login()` answers it without fetching it).
   */
  redirectUris?: string[];
  /** The claim that carries an account's groups (a team's `groups_claim`); by default `groups`. */
  groupsClaim?: string;
  /** Whether an authorization request without a PKCE S256 challenge is refused; by default true. */
  requirePkce?: boolean;
}

/** What reached the provider since start or the last `reset()`. */
export interface IdpCounts {
  /** Authorization requests (the `/auth` endpoint itself, not the resumptions after a sign-in step). */
  authorize: number;
  /** Sign-ins completed through the form (by a browser or by `login()`). */
  logins: number;
  /** Requests to the token endpoint, whatever their outcome. */
  token: number;
  /** Token requests the provider refused (bad client secret, wrong PKCE verifier, a code used twice, …). */
  tokenErrors: number;
  /** Requests that ended in the provider's `server_error`: a bug in the fixture or a test, never expected. */
  serverErrors: number;
}

export interface Idp {
  /** The issuer, `http://127.0.0.1:<port>`; discovery at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  client: { id: string; secret: string; redirectUris: string[] };
  accounts: IdpAccount[];
  /**
   * Signs in as `sub` for this authorization request (a URL of the provider's authorization endpoint, as a
   * relying party builds it) and answers where the provider finally sends the browser: the client's redirect URI
   * with `code`, `state` and `iss` (or with `error` when the provider refuses the request). Throws when the
   * provider answers anything else, e.g. for an unknown account or an unregistered redirect URI.
   */
  login: (authorizeUrl: string, sub: string) => Promise<string>;
  /** Cancels the sign-in of this authorization request: answers the redirect with `error=access_denied`. */
  deny: (authorizeUrl: string) => Promise<string>;
  counts: () => IdpCounts;
  reset: () => void;
  close: () => Promise<void>;
}

export const DEFAULT_ACCOUNTS: readonly IdpAccount[] = [
  { sub: "alice", email: "alice@example.com", email_verified: true },
  { sub: "bob", email: "bob@other.test", email_verified: true, groups: ["mcp-users"] },
];
export const DEFAULT_CLIENT_ID = "dynmcp-proxy";
export const DEFAULT_CLIENT_SECRET = "idp-fixture-client-secret-not-secret";
export const DEFAULT_REDIRECT_URI = "http://127.0.0.1/callback";

/** Bounds on `login()`: a flow is a handful of redirects, each answered at once on loopback. */
const MAX_STEPS = 12;
const STEP_TIMEOUT_MS = 5_000;
/** The sign-in form posts one short field; anything bigger is not a browser filling it. */
const MAX_FORM_BYTES = 4_096;

/**
 * The provider's storage in memory. Passing our own adapter (rather than relying on the built-in one) is what keeps
 * oidc-provider from warning about its development-only store at every start; the fixture lives for one test file.
 */
function memoryAdapter(): (model: string) => Adapter {
  const entries = new Map<string, { model: string; payload: AdapterPayload; expiresAt: number }>();
  const live = (key: string): AdapterPayload | undefined => {
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.payload;
  };
  const findBy = (model: string, field: "uid" | "userCode", value: string): AdapterPayload | undefined => {
    for (const [key, entry] of entries) {
      if (entry.model === model && entry.payload[field] === value) return live(key);
    }
    return undefined;
  };
  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    return {
      upsert: async (id, payload, expiresIn) => {
        entries.set(key(id), { model, payload, expiresAt: expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000 });
      },
      find: async (id) => live(key(id)),
      findByUid: async (uid) => findBy(model, "uid", uid),
      findByUserCode: async (userCode) => findBy(model, "userCode", userCode),
      consume: async (id) => {
        const payload = live(key(id));
        if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000);
      },
      destroy: async (id) => {
        entries.delete(key(id));
      },
      // Called for every model when a grant is revoked (a code used twice revokes the tokens it gave).
      revokeByGrantId: async (grantId) => {
        for (const [k, entry] of entries) if (entry.model === model && entry.payload.grantId === grantId) entries.delete(k);
      },
    };
  };
}

/** A signing key made at start, so oidc-provider does not fall back to (and warn about) its built-in test key. */
async function signingKey(): Promise<object> {
  const { privateKey } = await promisify(generateKeyPair)("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" };
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

/** A page's text for an error message: tags dropped, the entities `escapeHtml` makes undone, at most 300 chars. */
const pageText = (html: string): string =>
  html
    .replace(/<[^>]*>/g, " ")
    .replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e] ?? "")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 300);

const page = (title: string, body: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;

/** The sign-in form: one field (the account's `sub`), no password, and a way to cancel. */
function loginPage(uid: string, clientId: string, error?: string): string {
  const base = `/interaction/${encodeURIComponent(uid)}`;
  return page(
    "Sign in to the test IdP",
    `<p>Signing in to <code>${escapeHtml(clientId)}</code>.</p>` +
      (error === undefined ? "" : `<p role="alert">${escapeHtml(error)}</p>`) +
      `<form method="post" action="${base}/login">` +
      `<label>Username <input name="login" autocomplete="username" autofocus required></label>` +
      `<button type="submit">Sign in</button></form>` +
      `<p><a href="${base}/abort">Cancel</a></p>`,
  );
}

function send(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(html);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new Error("form too large");
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

interface ProviderSetup {
  accounts: IdpAccount[];
  client: { id: string; secret: string; redirectUris: string[] };
  groupsClaim: string;
  requirePkce: boolean;
  key: object;
}

/** oidc-provider configured as a team's IdP: every setting the fixture depends on, the rest quiet defaults. */
function providerFor(issuer: string, setup: ProviderSetup): Provider {
  const findAccount = async (_ctx: unknown, id: string): Promise<Account | undefined> => {
    const account = setup.accounts.find((a) => a.sub === id);
    if (account === undefined) return undefined;
    return {
      accountId: account.sub,
      // All of the account's claims: the provider hands out those the granted scopes name (`claims` below).
      claims: async () => ({
        sub: account.sub,
        email: account.email,
        email_verified: account.email_verified,
        ...(account.groups === undefined ? {} : { [setup.groupsClaim]: account.groups }),
      }),
    };
  };

  return new Provider(issuer, {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: setup.client.id,
        client_secret: setup.client.secret,
        redirect_uris: setup.client.redirectUris,
        grant_types: ["authorization_code"],
        response_types: ["code"],
        // A client registered for Basic may also send its secret in the body (oidc-provider accepts either).
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    clientAuthMethods: ["client_secret_basic", "client_secret_post"],
    // `profile` carries the groups (docs/oauth.md: a team's default scopes are openid email profile); a `groups`
    // scope does too, for teams whose provider wants it asked for by name.
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: [setup.groupsClaim], groups: [setup.groupsClaim] },
    // Put the scopes' claims in the ID token, not only at userinfo: the proxy reads email and groups from it.
    conformIdTokenClaims: false,
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    jwks: { keys: [setup.key] },
    features: {
      // Our own sign-in page (`interaction` in startIdp); the built-in one warns at every start.
      devInteractions: { enabled: false },
      // The proxy asks for no resource at its IdP; off, nothing can reach the (warning) default resolver.
      resourceIndicators: { enabled: false },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => setup.requirePkce },
    findAccount,
    clientBasedCORS: () => false,
    renderError: (ctx, out) => {
      ctx.type = "html";
      const rows = Object.entries(out).map(([k, v]) => `<p><b>${escapeHtml(k)}</b>: ${escapeHtml(String(v))}</p>`);
      ctx.body = page("IdP error", rows.join(""));
    },
    // Explicit lifetimes, short as a test needs them (each default warns when first used).
    ttl: { AccessToken: 300, AuthorizationCode: 60, IdToken: 300, Interaction: 600, Session: 3_600, Grant: 3_600 },
  });
}

export async function startIdp(options: IdpOptions = {}): Promise<Idp> {
  const accounts = (options.accounts ?? DEFAULT_ACCOUNTS).map((a) => ({ ...a, groups: a.groups?.slice() }));
  const client = {
    id: options.clientId ?? DEFAULT_CLIENT_ID,
    secret: options.clientSecret ?? DEFAULT_CLIENT_SECRET,
    redirectUris: (options.redirectUris ?? [DEFAULT_REDIRECT_URI]).slice(),
  };
  const groupsClaim = options.groupsClaim ?? "groups";
  const requirePkce = options.requirePkce ?? true;
  let counts: IdpCounts = { authorize: 0, logins: 0, token: 0, tokenErrors: 0, serverErrors: 0 };
  const key = await signingKey();

  // The issuer names the port, so the server listens before the provider exists.
  let handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> = async (_req, res) => {
    res.writeHead(503).end();
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, page("Error", escapeHtml(String(err))));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;

  // A configuration oidc-provider refuses must not leave the server listening. It checks a static client (e.g. its
  // redirect URIs) only when the client is first looked up, so that is done here rather than at the first sign-in.
  let provider: Provider;
  try {
    provider = providerFor(issuer, { accounts, client, groupsClaim, requirePkce, key });
    if ((await provider.Client.find(client.id)) === undefined) throw new Error(`startIdp: client ${client.id} not registered`);
  } catch (err) {
    server.close();
    // oidc-provider's errors say what is wrong in `error_description`, not in the message (`invalid_redirect_uri`).
    const description = err instanceof Error && "error_description" in err ? `: ${String(err.error_description)}` : "";
    throw new Error(`startIdp: ${err instanceof Error ? err.message : String(err)}${description}`, { cause: err });
  }
  provider.on("grant.error", () => {
    counts.tokenErrors++;
  });
  provider.on("server_error", () => {
    counts.serverErrors++;
  });
  const oidc = provider.callback();

  /** The sign-in steps: the form for `login`, consent given at once (the team chose this client), and cancel. */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, action: string): Promise<void> {
    let details: Interaction;
    try {
      details = await provider.interactionDetails(req, res);
    } catch {
      // No `_interaction` cookie, or an expired step: what a browser gets after a restart or a long pause.
      return send(res, 400, page("Sign-in expired", "<p>Start again from the application.</p>"));
    }
    if (details.uid !== uid) return send(res, 400, page("Sign-in mismatch", "<p>This is not the current sign-in.</p>"));
    const clientId = details.params.client_id ?? "";

    if (action === "abort") {
      return provider.interactionFinished(
        req,
        res,
        { error: "access_denied", error_description: "End-User aborted interaction" },
        { mergeWithLastSubmission: false },
      );
    }
    if (details.prompt.name === "login") {
      if (action === "" && req.method === "GET") return send(res, 200, loginPage(uid, clientId));
      if (action !== "login" || req.method !== "POST") return send(res, 405, page("Not allowed", ""));
      const sub = (await readForm(req)).get("login")?.trim() ?? "";
      if (!accounts.some((a) => a.sub === sub)) return send(res, 400, loginPage(uid, clientId, `No account "${sub}".`));
      counts.logins++;
      return provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
    }
    if (details.prompt.name === "consent" && details.session !== undefined) {
      // Like a workforce IdP with an admin-approved app: no consent page, every requested scope and claim granted.
      const grant =
        (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
        new provider.Grant({ accountId: details.session.accountId, clientId });
      const missing = details.prompt.details;
      if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
      if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scopes.join(" "));
      }
      const grantId = await grant.save();
      return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    }
    return send(res, 501, page("Not implemented", `<p>Prompt ${escapeHtml(details.prompt.name)}.</p>`));
  }

  handle = async (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    const step = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|abort))?$/.exec(path);
    if (step !== null) return interaction(req, res, step[1] ?? "", step[2] ?? "");
    if (path === "/auth") counts.authorize++;
    if (path === "/token" && req.method === "POST") counts.token++;
    return oidc(req, res);
  };

  /** Follows one authorization request through the provider the way a browser would, with its own cookie jar. */
  async function drive(authorizeUrl: string, choice: { sub: string } | { deny: true }): Promise<string> {
    const jar = new CookieJar();
    let url = new URL(authorizeUrl);
    let init: { method: string; body?: URLSearchParams } = { method: "GET" };
    let submitted = false;
    for (let steps = 0; steps < MAX_STEPS; steps++) {
      if (url.origin !== issuer) throw new Error(`login: ${url.href} is not at the IdP ${issuer}`);
      const res = await fetch(url, {
        ...init,
        headers: { accept: "text/html", cookie: jar.header(url) },
        redirect: "manual",
        signal: AbortSignal.timeout(STEP_TIMEOUT_MS),
      });
      jar.store(url, res.headers.getSetCookie());
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location !== null) {
        await res.body?.cancel();
        const next = new URL(location, url);
        // Leaving the IdP: this is the redirect to the client, with the code or the error.
        if (next.origin !== issuer) return next.href;
        url = next;
        init = { method: "GET" };
        continue;
      }
      const html = await res.text();
      const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
      if (res.status === 200 && action !== undefined && !submitted) {
        submitted = true;
        if ("deny" in choice) {
          const cancel = /<a href="([^"]+\/abort)"/.exec(html)?.[1];
          if (cancel === undefined) throw new Error("login: the sign-in page has no cancel link");
          url = new URL(cancel, url);
          init = { method: "GET" };
        } else {
          url = new URL(action, url);
          init = { method: "POST", body: new URLSearchParams({ login: choice.sub }) };
        }
        continue;
      }
      throw new Error(`login: HTTP ${res.status} at ${url.pathname}: ${pageText(html)}`);
    }
    throw new Error(`login: more than ${MAX_STEPS} steps without leaving the IdP`);
  }

  return {
    issuer,
    client,
    accounts,
    login: (authorizeUrl, sub) => drive(authorizeUrl, { sub }),
    deny: (authorizeUrl) => drive(authorizeUrl, { deny: true }),
    counts: () => ({ ...counts }),
    reset: () => {
      counts = { authorize: 0, logins: 0, token: 0, tokenErrors: 0, serverErrors: 0 };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Just enough of a browser's cookie store for one sign-in: cookies by name and path (oidc-provider scopes its
 * `_interaction` cookies to one step's path), removed when the provider expires them. Loopback only, so no domain
 * or `Secure` handling.
 */
class CookieJar {
  private readonly cookies = new Map<string, { name: string; value: string; path: string }>();

  store(url: URL, setCookies: string[]): void {
    for (const line of setCookies) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = url.pathname.replace(/\/[^/]*$/, "") || "/";
      let expired = value === "";
      for (const attribute of attributes) {
        const [key = "", val = ""] = attribute.split("=", 2).map((s) => s.trim());
        const lower = key.toLowerCase();
        if (lower === "path" && val.startsWith("/")) path = val;
        if (lower === "max-age" && Number(val) <= 0) expired = true;
        if (lower === "expires" && Date.parse(val) <= Date.now()) expired = true;
      }
      const id = `${name}\n${path}`;
      if (expired) this.cookies.delete(id);
      else this.cookies.set(id, { name, value, path });
    }
  }

  /** The `Cookie` header for a request to this URL (RFC 6265 path matching, longest paths first). */
  header(url: URL): string {
    const matches = (path: string) =>
      url.pathname === path || (url.pathname.startsWith(path) && (path.endsWith("/") || url.pathname[path.length] === "/"));
    return [...this.cookies.values()]
      .filter((c) => matches(c.path))
      .sort((a, b) => b.path.length - a.path.length)
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }
}
