// What the two oidc-provider fixtures share (harness/idp.ts, a team's IdP; harness/oauth-upstream.ts, an upstream
// MCP server's authorization server): storage in memory, a signing key made at start, the sign-in form with consent
// granted automatically, a loopback listener, and the headless driver that walks an authorization request through
// the form with a cookie jar the way a browser would. Node only: never imported by src/.
import { generateKeyPair, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import type { Adapter, AdapterPayload, Interaction } from "oidc-provider";
import type Provider from "oidc-provider";
import { CookieJar } from "./cookie-jar.ts";

/** Bounds on a headless sign-in: a flow is a handful of redirects, each answered at once on loopback. */
const MAX_STEPS = 12;
const STEP_TIMEOUT_MS = 5_000;
/** The sign-in form posts one short field; anything bigger is not a browser filling it. */
const MAX_FORM_BYTES = 4_096;

/** The provider's storage in memory, and a way for a fixture to drop every entry of one model (e.g. refresh tokens). */
export interface MemoryStore {
  adapter: (model: string) => Adapter;
  /** Removes every stored entry of this model; answers how many there were. */
  drop: (model: string) => number;
}

/**
 * The provider's storage in memory. Passing our own adapter (rather than relying on the built-in one) is what keeps
 * oidc-provider from warning about its development-only store at every start; a fixture lives for one test file.
 */
export function memoryStore(): MemoryStore {
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
  const adapter = (model: string): Adapter => {
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
  const drop = (model: string): number => {
    let dropped = 0;
    for (const [k, entry] of entries) {
      if (entry.model !== model) continue;
      entries.delete(k);
      dropped++;
    }
    return dropped;
  };
  return { adapter, drop };
}

/** A signing key made at start, so oidc-provider does not fall back to (and warn about) its built-in test key. */
export async function signingKey(): Promise<object> {
  const { privateKey } = await promisify(generateKeyPair)("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" };
}

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

/** A page's text for an error message: tags dropped, the entities `escapeHtml` makes undone, at most 300 chars. */
export const pageText = (html: string): string =>
  html
    .replace(/<[^>]*>/g, " ")
    .replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e] ?? "")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 300);

export const page = (title: string, body: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;

/** The sign-in form: one field (the account's `sub`), no password, and a way to cancel. */
export function loginPage(title: string, uid: string, clientId: string, error?: string): string {
  const base = `/interaction/${encodeURIComponent(uid)}`;
  return page(
    title,
    `<p>Signing in to <code>${escapeHtml(clientId)}</code>.</p>` +
      (error === undefined ? "" : `<p role="alert">${escapeHtml(error)}</p>`) +
      `<form method="post" action="${base}/login">` +
      `<label>Username <input name="login" autocomplete="username" autofocus required></label>` +
      `<button type="submit">Sign in</button></form>` +
      `<p><a href="${base}/abort">Cancel</a></p>`,
  );
}

export function send(res: ServerResponse, status: number, html: string): void {
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

/** The `/interaction/<uid>[/login|/abort]` paths of the sign-in steps; the rest goes to the provider. */
export const INTERACTION_PATH = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|abort))?$/;

export interface InteractionOptions {
  /** The sign-in page's title. */
  title: string;
  /** Whether this `sub` may sign in. */
  knows: (sub: string) => boolean;
  /** Called for each sign-in completed through the form. */
  onLogin: () => void;
}

/** The sign-in steps: the form for `login`, consent given at once (the client is trusted), and cancel. */
export async function handleInteraction(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  action: string,
  options: InteractionOptions,
): Promise<void> {
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
    if (action === "" && req.method === "GET") return send(res, 200, loginPage(options.title, uid, clientId));
    if (action !== "login" || req.method !== "POST") return send(res, 405, page("Not allowed", ""));
    const sub = (await readForm(req)).get("login")?.trim() ?? "";
    if (!options.knows(sub)) return send(res, 400, loginPage(options.title, uid, clientId, `No account "${sub}".`));
    options.onLogin();
    return provider.interactionFinished(req, res, { login: { accountId: sub } }, { mergeWithLastSubmission: false });
  }
  if (details.prompt.name === "consent" && details.session !== undefined) {
    // Like a workforce IdP with an admin-approved app: no consent page, every requested scope, claim and resource
    // scope (RFC 8707 resource indicators) granted.
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

/**
 * Follows one authorization request through the provider at `issuer` the way a browser would, with its own cookie
 * jar, signing in as `sub` (or cancelling), and answers the first URL outside the provider: the client's redirect
 * URI with `code`, `state` and `iss`, or with `error`. Never fetches that URL. Throws on any other answer.
 */
export async function driveAuthorization(issuer: string, authorizeUrl: string, choice: { sub: string } | { deny: true }): Promise<string> {
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

/**
 * A node:http server on 127.0.0.1 with a random port whose handler is set later (a provider's issuer names the
 * port, so the server listens before the provider exists). Until then it answers 503; an error thrown by the
 * handler becomes a 500 page, or a dropped connection once the answer has begun.
 */
export async function listenLoopback(): Promise<{
  server: Server;
  origin: string;
  setHandler: (handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) => void;
  close: () => Promise<void>;
}> {
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
  return {
    server,
    origin: `http://127.0.0.1:${port}`,
    setHandler: (handler) => {
      handle = handler;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
