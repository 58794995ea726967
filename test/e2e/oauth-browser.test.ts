// Issue 16's acceptance test, once end to end in a real browser: a host (the v2 SDK client) connects to the proxy
// under `wrangler dev` with OAUTH_HOSTS=on, gets the 401, discovers, registers and hands the authorization URL to
// Chromium; the member consents on the proxy's page, signs in at the team's OpenID provider (harness/idp.ts), and the
// browser lands on the host's loopback callback with a code; the host finishes the flow and calls a real upstream's
// tool through the proxy. A member of another domain ends at the same callback with access_denied.
//
// The proxy is reached as http://localhost:<port> everywhere (host, browser, the IdP's redirect URI) with PUBLIC_URL
// unset: the issuer is then the request's origin, which the OAuth library accepts over plain http on loopback only,
// and one host name keeps the browser's `__Host-` binding cookie flowing (harness/browser.ts).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import type { Page, Response as PageResponse } from "playwright-core";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { HostProvider } from "../shared/host-provider.ts";
import { arrive, chromiumOrSkip, chromiumPath, launchBrowser, type TestBrowser } from "../../harness/browser.ts";
import { startIdp, type Idp } from "../../harness/idp.ts";
import { freePort, startEverything, startWranglerDev, type Running } from "../../harness/processes.ts";
import { E2E_SECRETS_KEY } from "../../harness/clients.ts";

const TEAM = "browser";
const HOST_NAME = "Browser E2E Host";
const ADMIN_TOKEN = "e2e-admin";
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN, OAUTH_HOSTS: "on" };

let dir: string | undefined;
let port: number;
let proxy: Running | undefined;
let everything: Running | undefined;
let idp: Idp | undefined;
let host: HostCallback | undefined;
let browser: TestBrowser | undefined;

/** The proxy's base as host and browser name it: `localhost`, not the 127.0.0.1 wrangler listens on. */
const base = () => `http://localhost:${port}`;
const mcpUrl = () => new URL(`${base()}/t/${TEAM}/mcp`);

/** The host's loopback redirect URI: a tiny server that records each callback's query, as a desktop host runs one. */
interface HostCallback {
  redirectUri: string;
  callbacks: URLSearchParams[];
  close: () => Promise<void>;
}

async function startHostCallback(): Promise<HostCallback> {
  const callbacks: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    callbacks.push(url.searchParams);
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
    res.end("<!doctype html><title>Signed in</title><h1>You can close this window</h1>");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port: p } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${p}/callback`,
    callbacks,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

beforeAll(async () => {
  // Without Chromium nothing is started: each test then skips (or, under CI, fails) through chromiumOrSkip.
  const executablePath = chromiumPath();
  if (executablePath === undefined) return;
  dir = mkdtempSync(join(tmpdir(), "dynmcp-oauth-browser-"));
  const state = join(dir, "state");
  // How long each step took, in the error when one fails (a slow machine shows here first).
  const took: string[] = [];
  const timed = async <T>(what: string, work: Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await work;
    } finally {
      took.push(`${what} ${Math.round(performance.now() - t0)} ms`);
    }
  };
  try {
    // The port is fixed first (the IdP's registered redirect URI names it) and taken by wrangler dev at once, so no
    // other process on this machine can grab it in between. Each fixture is assigned as it comes, so afterAll stops
    // whatever started even when another one fails (all settle first: none is still starting when afterAll runs).
    port = await freePort();
    const started = await Promise.allSettled([
      timed("wrangler dev", startWranglerDev({ persistTo: state, vars: VARS, port })).then((r) => (proxy = r)),
      timed("server-everything", startEverything()).then((r) => (everything = r)),
      timed("IdP", startIdp({ redirectUris: [`${base()}/t/${TEAM}/oauth/callback`] })).then((r) => (idp = r)),
      timed("host callback", startHostCallback()).then((r) => (host = r)),
      timed("Chromium", launchBrowser({ executablePath })).then((r) => (browser = r)),
    ]);
    const failed = started.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;

    // Seeded as an operator seeds a deployment, through the admin API of the running proxy (the team CLI's local
    // `oauth set` has its own e2e test in proxy.test.ts; here it would add a wrangler process per KV operation).
    const admin = async (path: string, body: unknown) => {
      const res = await timed(`PUT ${path}`, fetch(`${base()}/admin/teams/${TEAM}/${path}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      }));
      if (!res.ok) throw new Error(`PUT /admin/teams/${TEAM}/${path}: HTTP ${res.status} ${await res.text()}`);
    };
    await admin("config", { mcp: { everything: { transport: "streamable-http", url: everything!.url, description: "The MCP reference server" } } });
    await admin("secrets/IDP_SECRET", { value: idp!.client.secret });
    await admin("oauth", { issuer: idp!.issuer, client_id: idp!.client.id, client_secret: "IDP_SECRET", allowed_domains: ["example.com"] });
  } catch (err) {
    throw new Error(`setup failed after ${took.join(", ")}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}, 120_000);

afterAll(async () => {
  // Each fixture on its own: one failing to stop must not keep the others running.
  await Promise.allSettled([browser?.close(), proxy?.stop(), everything?.stop(), idp?.close(), host?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

/** The fixtures of a browser test, or the test skipped (no Chromium, outside CI) or failed (none under CI). */
function fixtures(ctx: TestContext) {
  chromiumOrSkip((note) => ctx.skip(note));
  if (!browser || !proxy || !idp || !host) throw new Error("Chromium is installed but the fixtures did not start");
  // What wrangler printed (the proxy's log lines) is the first thing to read when a step fails.
  const shown = proxy.output().length;
  ctx.onTestFailed(() => {
    console.error(`wrangler dev output during the test:\n${proxy?.output().slice(shown).slice(-6000)}`);
  });
  return { browser, proxy, idp, host };
}

/** The host's first connect: 401, discovery, registration, and the authorization URL handed over (no token yet). */
async function hostStartsSignIn(provider: HostProvider): Promise<{ transport: StreamableHTTPClientTransport; authorization: URL }> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await expect(new Client({ name: "browser-host", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizations).toHaveLength(1);
  const authorization = provider.authorizations[0]!;
  expect(authorization.origin + authorization.pathname).toBe(`${base()}/t/${TEAM}/oauth/authorize`);
  expect(authorization.searchParams.get("redirect_uri")).toBe(provider.redirectUrl);
  expect(authorization.searchParams.get("state")).toBe(provider.state());
  return { transport, authorization };
}


/**
 * The member's part in the browser: the consent page (answered as it came), Allow, the IdP's form as `account`, and
 * the query the host's callback received (exactly one callback, the page the browser shows).
 */
async function memberSignsIn(
  page: Page,
  authorization: URL,
  account: string,
  callback: HostCallback,
): Promise<{ consent: PageResponse; consentText: string; back: URLSearchParams; proxyCookies: string[][] }> {
  const before = callback.callbacks.length;
  // The proxy's cookies in the browser at each stop (its `__Host-` binding cookies).
  const proxyCookies: string[][] = [];
  const snapshot = async () => {
    const cookies = await page.context().cookies(base());
    proxyCookies.push(cookies.map((c) => `${c.name}; secure=${c.secure}; httpOnly=${c.httpOnly}; sameSite=${c.sameSite}; path=${c.path}`));
  };
  const consent = await page.goto(authorization.href);
  if (consent === null) throw new Error("no response for the consent page");
  // Read while the browser shows it: the body is gone once the form is posted.
  const consentText = await page.locator("body").innerText();
  expect(consent.status(), consentText).toBe(200);
  await snapshot();
  await page.getByRole("button", { name: "Allow" }).click();

  // The proxy sent the browser to the team's IdP: its sign-in form.
  const issuer = idp!.issuer;
  await arrive(page, (url) => url.origin === issuer && url.pathname.startsWith("/interaction/"), "the IdP's sign-in form");
  await snapshot();
  await page.locator('input[name="login"]').fill(account);
  await page.getByRole("button", { name: "Sign in" }).click();

  // IdP → the proxy's callback → the host's redirect URI.
  await arrive(page, (url) => `${url.origin}${url.pathname}` === callback.redirectUri, "the host's redirect URI");
  expect(await page.locator("h1").textContent()).toBe("You can close this window");
  expect(callback.callbacks.length).toBe(before + 1);
  const back = callback.callbacks[before]!;
  expect(new URL(page.url()).searchParams.toString()).toBe(back.toString());
  await snapshot();
  return { consent, consentText, back, proxyCookies };
}

describe("a host signs a member in through a real browser (wrangler dev, OAUTH_HOSTS=on)", () => {
  it("consent, sign-in at the team's IdP, back to the host with a code; the host then lists tools and calls the upstream", async (ctx) => {
    const { browser, idp, host: callback } = fixtures(ctx);
    const provider = new HostProvider({ name: HOST_NAME, redirectUri: callback.redirectUri, state: randomBytes(16).toString("base64url") });
    const { transport, authorization } = await hostStartsSignIn(provider);
    const logins = idp.counts().logins;

    const page = await browser.newPage();
    ctx.onTestFinished(() => page.close());
    const { consent, consentText: text, back, proxyCookies } = await memberSignsIn(page, authorization, "alice", callback);

    // The consent page named the client and the team, and may not be framed.
    // allHeaders(): playwright's headers() leaves out some security-related ones.
    const headers = await consent.allHeaders();
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["cache-control"]).toBe("no-store");
    expect(text).toContain(`Allow ${HOST_NAME}?`);
    expect(text).toContain(`MCP server of team ${TEAM}`);
    expect(text).toContain("everything: The MCP reference server");
    expect(text).toContain("Access is sent to 127.0.0.1");
    // Chromium kept the proxy's `__Host-` binding cookie over plain http on localhost: one for the consent page (a
    // flow cookie: the page's handle is signed, not stored), the library's for the trip to the IdP (the consent one
    // cleared when posted); once the callback used it, only the member cookie is left (which member this browser is,
    // for connect links of per_user upstreams).
    const cookie = (name: string) => expect.stringMatching(new RegExp(`^__Host-${name}[^;]*; secure=true; httpOnly=true; sameSite=Lax; path=/$`));
    expect(proxyCookies).toEqual([[cookie("dynmcp-flow-")], [cookie("oauth-upstream")], [cookie("dynmcp-member")]]);

    // The callback: a code, the host's own state, and the team's issuer (RFC 9207).
    expect(back.get("error"), back.toString()).toBeNull();
    expect(back.get("code")).toBeTruthy();
    expect(back.get("state")).toBe(provider.state());
    expect(back.get("iss")).toBe(`${base()}/t/${TEAM}`);
    expect(idp.counts()).toMatchObject({ logins: logins + 1, serverErrors: 0, tokenErrors: 0 });

    await transport.finishAuth(back);
    expect(provider.stored?.access_token).toBeTruthy();
    expect(provider.stored?.refresh_token).toBeTruthy();

    // Reconnected with the token: the proxy's tools, and a real call through use_tool to server-everything.
    const client = new Client({ name: "browser-host", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["discover_tool", "use_tool", "load_mcp"]);
      // Described upstreams load lazily: load it under the member's grant, then call its tool.
      const loaded = await client.callTool({ name: "load_mcp", arguments: { mcp_name: "everything" } });
      expect(loaded.isError, JSON.stringify(loaded)).toBeFalsy();
      const echoed = await client.callTool({ name: "use_tool", arguments: { tool_name: "everything/echo", tool_input: { message: "signed in through a browser" } } });
      expect(echoed.isError, JSON.stringify(echoed)).toBeFalsy();
      expect(echoed.content).toEqual([{ type: "text", text: "Echo: signed in through a browser" }]);
    } finally {
      await client.close();
    }
    // One sign-in, no second trip through the browser.
    expect(provider.authorizations).toHaveLength(1);
  });

  it("sends a member outside the team's allowed domains back to the host with access_denied and no code", async (ctx) => {
    const { browser, idp, host: callback } = fixtures(ctx);
    const provider = new HostProvider({ name: HOST_NAME, redirectUri: callback.redirectUri, state: randomBytes(16).toString("base64url") });
    const { authorization } = await hostStartsSignIn(provider);
    const logins = idp.counts().logins;

    // A fresh browser context: no IdP session from the other test, so bob really signs in.
    const page = await browser.newPage();
    ctx.onTestFinished(() => page.close());
    const { back, proxyCookies } = await memberSignsIn(page, authorization, "bob", callback);

    expect(idp.counts().logins).toBe(logins + 1);
    expect(back.get("error"), back.toString()).toBe("access_denied");
    expect(back.get("error_description")).toContain("a verified email address in an allowed domain");
    expect(back.has("code")).toBe(false);
    expect(back.get("state")).toBe(provider.state());
    expect(back.get("iss")).toBe(`${base()}/t/${TEAM}`);
    expect(provider.stored).toBeUndefined();
    // The refusal used up the browser's binding too.
    expect(proxyCookies.at(-1)).toEqual([]);
  });
});
