// A team's OpenID Connect provider on loopback for tests of the proxy's sign-in (issue 16, docs/oauth.md 3.5):
// oidc-provider 9 with a fixed list of accounts (email, email_verified, groups), one confidential client registered
// up front, PKCE S256, and the account's email and groups in the ID token. Its sign-in page is a plain HTML form
// that a browser can fill; `login()` drives the same form over HTTP with a cookie jar, so tests need no browser.
// Node only (oidc-provider is ESM, needs Node 22 LTS or later): never imported by src/.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import Provider, { type Account } from "oidc-provider";
import { INTERACTION_PATH, driveAuthorization, escapeHtml, handleInteraction, listenLoopback, memoryStore, page, signingKey } from "./oidc-shared.ts";

/** A user of the provider. `sub` is also what is typed into the sign-in form. */
export interface IdpAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  groups?: string[];
  /**
   * Whether the provider gives this account's sign-ins a refresh token (as a provider asked for offline access does),
   * with which a relying party reads the account's claims of a later moment; by default none.
   */
  refreshTokens?: boolean;
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
    adapter: memoryStore().adapter,
    clients: [
      {
        client_id: setup.client.id,
        client_secret: setup.client.secret,
        redirect_uris: setup.client.redirectUris,
        // Refresh tokens only for the accounts that get them (`issueRefreshToken` below).
        grant_types: ["authorization_code", "refresh_token"],
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
    issueRefreshToken: (_ctx, _client, code) => setup.accounts.some((a) => a.sub === (code as { accountId?: string }).accountId && a.refreshTokens === true),
    clientBasedCORS: () => false,
    renderError: (ctx, out) => {
      ctx.type = "html";
      const rows = Object.entries(out).map(([k, v]) => `<p><b>${escapeHtml(k)}</b>: ${escapeHtml(String(v))}</p>`);
      ctx.body = page("IdP error", rows.join(""));
    },
    // Explicit lifetimes, short as a test needs them (each default warns when first used).
    ttl: { AccessToken: 300, AuthorizationCode: 60, IdToken: 300, Interaction: 600, Session: 3_600, Grant: 3_600, RefreshToken: 3_600 },
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
  const listener = await listenLoopback();
  const issuer = listener.origin;

  // A configuration oidc-provider refuses must not leave the server listening. It checks a static client (e.g. its
  // redirect URIs) only when the client is first looked up, so that is done here rather than at the first sign-in.
  let provider: Provider;
  try {
    provider = providerFor(issuer, { accounts, client, groupsClaim, requirePkce, key });
    if ((await provider.Client.find(client.id)) === undefined) throw new Error(`startIdp: client ${client.id} not registered`);
  } catch (err) {
    void listener.close();
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

  const interaction = (req: IncomingMessage, res: ServerResponse, uid: string, action: string): Promise<void> =>
    handleInteraction(provider, req, res, uid, action, {
      title: "Sign in to the test IdP",
      knows: (sub) => accounts.some((a) => a.sub === sub),
      onLogin: () => {
        counts.logins++;
      },
    });

  listener.setHandler(async (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    const step = INTERACTION_PATH.exec(path);
    if (step !== null) return interaction(req, res, step[1] ?? "", step[2] ?? "");
    if (path === "/auth") counts.authorize++;
    if (path === "/token" && req.method === "POST") counts.token++;
    return oidc(req, res);
  });

  return {
    issuer,
    client,
    accounts,
    login: (authorizeUrl, sub) => driveAuthorization(issuer, authorizeUrl, { sub }),
    deny: (authorizeUrl) => driveAuthorization(issuer, authorizeUrl, { deny: true }),
    counts: () => ({ ...counts }),
    reset: () => {
      counts = { authorize: 0, logins: 0, token: 0, tokenErrors: 0, serverErrors: 0 };
    },
    close: listener.close,
  };
}
