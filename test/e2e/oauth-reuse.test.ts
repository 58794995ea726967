// A stolen refresh token under `wrangler dev` (real workerd, KV and the team's index object on disk), as a tester found
// it: a host (the v2 SDK client) signs a member in through the team's OpenID provider (harness/idp.ts; the member's
// browser is the HTTP driver, test/shared/oauth-driver.ts) and refreshes once (rt1 → rt2); a thief replays rt1. Every
// replay is refused, and the grant is revoked: the owner's rt2 and access token stop too, so the owner signs in again.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { HostProvider } from "../shared/host-provider.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { startIdp, type Idp } from "../../harness/idp.ts";
import { freePort, startWranglerDev, type Running } from "../../harness/processes.ts";
import { E2E_SECRETS_KEY } from "../../harness/clients.ts";

const TEAM = "reuse";
const ADMIN_TOKEN = "e2e-admin";
// No accepted token is kept in the isolate, so that what is revoked is seen at once (the cache's own bound is tested in
// the workers pool).
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN, OAUTH_HOSTS: "on", TOKEN_CACHE_SECONDS: "0" };

let dir: string | undefined;
let port: number;
let proxy: Running | undefined;
let idp: Idp | undefined;

/** The proxy as host and browser name it (`localhost`: the issuer is the request's origin, http on loopback only). */
const base = () => `http://localhost:${port}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-oauth-reuse-"));
  port = await freePort();
  const started = await Promise.allSettled([
    startWranglerDev({ persistTo: join(dir, "state"), vars: VARS, port }).then((r) => (proxy = r)),
    startIdp({ redirectUris: [`${base()}/t/${TEAM}/oauth/callback`] }).then((r) => (idp = r)),
  ]);
  const failed = started.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  for (const [path, body] of [
    ["config", { mcp: {} }],
    ["secrets/IDP_SECRET", { value: idp!.client.secret }],
    ["oauth", { issuer: idp!.issuer, client_id: idp!.client.id, client_secret: "IDP_SECRET", allowed_domains: ["example.com"] }],
  ] as const) {
    const res = await fetch(`${base()}/admin/teams/${TEAM}/${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`PUT ${path}: HTTP ${res.status} ${await res.text()}`);
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([proxy?.stop(), idp?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

const mcpUrl = () => new URL(`${base()}/t/${TEAM}/mcp`);
/** The host's client, connected with what its provider holds (refreshing first when the proxy refuses the token). */
async function connect(host: HostProvider): Promise<Client> {
  const client = new Client({ name: "reuse-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: host }));
  return client;
}

describe("a stolen refresh token under wrangler dev", () => {
  it("replayed after the owner's refresh: refused every time, and the owner's tokens are revoked with the grant", async () => {
    const host = new HostProvider({ name: "Reuse Host", redirectUri: "http://127.0.0.1:1/callback" });
    const first = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: host });
    await expect(new Client({ name: "reuse-host", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const outcome = await signInAs(host.authorizations[0]!.href, { proxyOrigin: base(), proxy: (request) => fetch(request), account: "alice" });
    if (outcome.kind !== "redirect") throw new Error(`the sign-in stopped at ${outcome.url.pathname}: ${outcome.text}`);
    await first.finishAuth(outcome.url.searchParams);
    const stolen = host.stored!.refresh_token!;

    // The owner's host finds its access token refused and refreshes: rt1 → rt2.
    host.stored = { ...host.stored!, access_token: "stale:token:value" };
    await (await connect(host)).close();
    const owner = host.stored!;
    expect(owner.refresh_token).not.toBe(stolen);

    const shown = proxy!.output().length;
    for (let i = 0; i < 5; i++) {
      const replay = await fetch(`${base()}/t/${TEAM}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: stolen, client_id: host.client!.client_id }),
      });
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    }
    const mcp = await fetch(mcpUrl(), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${owner.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    expect(mcp.status).toBe(401);
    // The owner's host refreshes with rt2, which died with the grant: it must sign the member in again.
    host.stored = { ...owner, access_token: "stale:token:value" };
    await expect(connect(host)).rejects.toBeInstanceOf(UnauthorizedError);
    // The proxy's log says whose grant was revoked and why, and holds none of the tokens.
    const log = proxy!.output().slice(shown);
    expect(log).toContain('"event":"oauth_reuse"');
    expect(log).toContain('"reason":"superseded"');
    for (const token of [stolen, owner.refresh_token!, owner.access_token]) expect(log).not.toContain(token.split(":")[2]);
  });
});
