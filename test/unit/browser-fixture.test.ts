// The browser fixture (harness/browser.ts) drives the system's Chromium through a real sign-in at the test IdP
// (harness/idp.ts): the IdP's HTML form filled and submitted by the browser, the redirect followed to a relying
// party's callback on loopback, and the code redeemed for an ID token. Also a cancelled sign-in, the `__Host-` cookies
// the proxy's own sign-in will rely on, and the skip-or-fail rule for a machine without Chromium.
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { Page } from "playwright-core";
import { chromiumOrSkip, chromiumPath, launchBrowser, type TestBrowser } from "../../harness/browser.ts";
import { startIdp, type Idp } from "../../harness/idp.ts";

/** Starting Chromium takes about a second; a sign-in a few more. Far above either, far below a stalled CI job. */
const TEST_TIMEOUT_MS = 30_000;
const HOOK_TIMEOUT_MS = 30_000;
/** A hang of a plain fetch fails the test instead of stalling it. */
const timeout = () => AbortSignal.timeout(5_000);

/** The relying party's side: a loopback server whose /callback records the query the browser arrives with. */
interface RelyingParty {
  redirectUri: string;
  callbacks: URLSearchParams[];
  close: () => Promise<void>;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

async function startRelyingParty(): Promise<RelyingParty> {
  const callbacks: URLSearchParams[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://rp.invalid");
    if (url.pathname !== "/callback") return void res.writeHead(404).end();
    callbacks.push(url.searchParams);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end("<!doctype html><title>RP callback</title><h1>Callback received</h1>");
  });
  const port = await listen(server);
  return { redirectUri: `http://127.0.0.1:${port}/callback`, callbacks, close: () => closeServer(server) };
}

interface Discovery {
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

let rp: RelyingParty | undefined;
let idp: Idp | undefined;
let discovery: Discovery;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  rp = await startRelyingParty();
  idp = await startIdp({ redirectUris: [rp.redirectUri] });
  const res = await fetch(`${idp.issuer}/.well-known/openid-configuration`, { signal: timeout() });
  expect(res.status).toBe(200);
  discovery = (await res.json()) as Discovery;
  // Only where there is a Chromium: each browser test itself skips (or, under CI, fails) when there is none.
  const executablePath = chromiumPath();
  if (executablePath !== undefined) browser = await launchBrowser({ executablePath });
}, HOOK_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await idp?.close();
  await rp?.close();
}, HOOK_TIMEOUT_MS);

/** A page in a fresh context, or the test skipped (no Chromium, outside CI) or failed (no Chromium under CI). */
async function freshPage(ctx: TestContext): Promise<Page> {
  chromiumOrSkip((note) => ctx.skip(note));
  if (browser === undefined) throw new Error("Chromium is installed but was not launched");
  const page = await browser.newPage();
  // Closing the page closes its context: the next test starts without this one's IdP session cookies.
  ctx.onTestFinished(() => page.close());
  return page;
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

/** An authorization request as a relying party builds it: code flow, PKCE S256, state and nonce. */
function authorization() {
  if (idp === undefined || rp === undefined) throw new Error("fixtures not started");
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(16));
  const nonce = base64url(randomBytes(16));
  const url = new URL(discovery.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: idp.client.id,
    redirect_uri: rp.redirectUri,
    scope: "openid email",
    state,
    nonce,
    code_challenge: base64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
  }).toString();
  return { url: url.href, verifier, state, nonce };
}

/** Waits until the browser is at the relying party's callback, and answers what the RP received there. */
async function landAtCallback(page: Page, before: number): Promise<URLSearchParams> {
  if (rp === undefined) throw new Error("fixtures not started");
  const redirectUri = rp.redirectUri;
  await page.waitForURL((url) => `${url.origin}${url.pathname}` === redirectUri);
  // The RP's page is what the browser shows, not an error page of the IdP's or the browser's.
  expect(await page.locator("h1").textContent()).toBe("Callback received");
  // Exactly one request reached the callback for this sign-in, and it is the page the browser shows.
  expect(rp.callbacks.length).toBe(before + 1);
  const received = rp.callbacks[before] ?? new URLSearchParams();
  expect(new URL(page.url()).searchParams.toString()).toBe(received.toString());
  return received;
}

describe("a real browser at the test IdP", () => {
  it(
    "signs in as alice through the HTML form and gets a code that redeems for her ID token",
    async (ctx) => {
      const page = await freshPage(ctx);
      if (idp === undefined || rp === undefined) throw new Error("fixtures not started");
      idp.reset();
      const request = authorization();
      const before = rp.callbacks.length;

      await page.goto(request.url);
      // The IdP sent the browser to its own sign-in page (not straight back: there is no session yet).
      expect(new URL(page.url()).origin).toBe(idp.issuer);
      expect(await page.title()).toBe("Sign in to the test IdP");
      await page.locator('input[name="login"]').fill("alice");
      await page.getByRole("button", { name: "Sign in" }).click();
      const callback = await landAtCallback(page, before);

      expect(callback.get("error")).toBeNull();
      expect(callback.get("state")).toBe(request.state);
      expect(callback.get("iss")).toBe(idp.issuer);
      const code = callback.get("code");
      expect(code).toMatch(/^[\w-]{20,}$/);
      // The browser's form post is what signed in: the IdP counted one sign-in, and nothing went wrong inside it.
      expect(idp.counts()).toMatchObject({ authorize: 1, logins: 1, serverErrors: 0 });

      // The relying party's back channel: the code and the PKCE verifier, the client authenticated with Basic.
      const basic = Buffer.from(`${encodeURIComponent(idp.client.id)}:${encodeURIComponent(idp.client.secret)}`);
      const res = await fetch(discovery.token_endpoint, {
        method: "POST",
        headers: {
          authorization: `Basic ${basic.toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code: code ?? "",
          redirect_uri: rp.redirectUri,
          code_verifier: request.verifier,
        }),
        signal: timeout(),
      });
      const body = (await res.json()) as { id_token?: string; error?: string; error_description?: string };
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(body.id_token).toEqual(expect.any(String));
      const { payload } = await jwtVerify(body.id_token ?? "", createRemoteJWKSet(new URL(discovery.jwks_uri)), {
        issuer: idp.issuer,
        audience: idp.client.id,
      });
      expect(payload).toMatchObject({ sub: "alice", email: "alice@example.com", email_verified: true, nonce: request.nonce });
      expect(idp.counts().tokenErrors).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "cancelling at the sign-in form sends the browser back with error=access_denied and no code",
    async (ctx) => {
      const page = await freshPage(ctx);
      if (idp === undefined || rp === undefined) throw new Error("fixtures not started");
      idp.reset();
      const request = authorization();
      const before = rp.callbacks.length;

      await page.goto(request.url);
      expect(await page.title()).toBe("Sign in to the test IdP");
      await page.getByRole("link", { name: "Cancel" }).click();
      const callback = await landAtCallback(page, before);

      expect(callback.get("error")).toBe("access_denied");
      expect(callback.get("state")).toBe(request.state);
      expect(callback.get("iss")).toBe(idp.issuer);
      expect(callback.get("code")).toBeNull();
      expect(idp.counts()).toMatchObject({ logins: 0, serverErrors: 0 });
    },
    TEST_TIMEOUT_MS,
  );

  // What the proxy's own sign-in (next step) relies on in its end-to-end test: Chromium keeps a `__Host-` cookie from
  // plain http on loopback (see harness/browser.ts). Cheap: one extra context and a few loopback requests.
  it(
    "keeps a __Host- Secure cookie set over http by localhost and by 127.0.0.1, and sends it back",
    async (ctx) => {
      const page = await freshPage(ctx);
      const seen: Array<string | undefined> = [];
      const server = createServer((req, res) => {
        if (req.url === "/set") res.setHeader("set-cookie", "__Host-x=1; Secure; HttpOnly; SameSite=Lax; Path=/");
        else seen.push(req.headers.cookie);
        res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>cookie</title>");
      });
      try {
        const port = await listen(server);
        for (const host of ["localhost", "127.0.0.1"]) {
          await page.goto(`http://${host}:${port}/set`);
          await page.goto(`http://${host}:${port}/check`);
          expect(seen.at(-1), host).toBe("__Host-x=1");
        }
        const stored = await page.context().cookies();
        expect(stored.map((c) => `${c.name}@${c.domain} secure=${c.secure}`).sort()).toEqual([
          "__Host-x@127.0.0.1 secure=true",
          "__Host-x@localhost secure=true",
        ]);
      } finally {
        await closeServer(server);
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a machine without Chromium", () => {
  const missing = { CHROMIUM_PATH: "/nonexistent/chromium" };
  const skip = (note: string): never => {
    throw new Error(`skipped: ${note}`);
  };

  it("is skipped with a message saying how to get one, outside CI", () => {
    expect(chromiumPath(missing)).toBeUndefined();
    expect(() => chromiumOrSkip(skip, missing)).toThrow(/^skipped: no Chromium at \/nonexistent\/chromium \(apt-get install chromium/);
  });

  it("fails under CI, which must run the browser tests", () => {
    expect(() => chromiumOrSkip(skip, { ...missing, CI: "true" })).toThrow(/^No Chromium at \/nonexistent\/chromium, and CI is set/);
  });

  it("uses CHROMIUM_PATH when that file exists", () => {
    // Any file that exists will do: the choice is made on existence, the launch is what proves it is a browser.
    expect(chromiumPath({ CHROMIUM_PATH: process.execPath })).toBe(process.execPath);
    expect(chromiumOrSkip(skip, { CHROMIUM_PATH: process.execPath, CI: "true" })).toBe(process.execPath);
  });
});
