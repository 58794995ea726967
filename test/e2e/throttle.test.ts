// The per-address limits under `wrangler dev`, with the project's own wrangler.toml: failed authentications at the MCP
// endpoint and the admin API, and requests of the OAuth routes, 100 a minute from one client address, then 429 with
// Retry-After. `wrangler dev` passes a client's CF-Connecting-IP through (and sets it from the client's address
// otherwise), so each attacker here is an address of its own; the proxy's own requests from 127.0.0.1 are not touched.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startWranglerDev, type Running } from "../../harness/processes.ts";
import { provisionByAdmin } from "../../harness/clients.ts";
import { mintToken } from "../../src/auth/token.ts";
import { expectThrottled } from "../shared/throttled.ts";

const ADMIN_TOKEN = "e2e-throttle-admin";
const LIMIT = 100;
let dir: string;
let proxy: Running;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-throttle-"));
  proxy = await startWranglerDev({ persistTo: join(dir, "state"), port: await freePort(), vars: { SESSION_KEY: "throttle", ADMIN_TOKEN } });
  token = await provisionByAdmin(proxy.url, ADMIN_TOKEN, "guarded", { mcp: { up: { url: "https://mcp.example.com/mcp", description: "never connected here" } } });
});

afterAll(async () => {
  await proxy?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** An authenticated request that reaches past the token step (a GET without a session: 400). */
const mcpGet = (bearer: string, address?: string) =>
  fetch(`${proxy.url}/t/guarded/mcp`, {
    headers: { authorization: `Bearer ${bearer}`, accept: "text/event-stream", ...(address ? { "cf-connecting-ip": address } : {}) },
  });

const adminGet = (bearer: string, address: string) =>
  fetch(`${proxy.url}/admin/teams/guarded/config`, { headers: { authorization: `Bearer ${bearer}`, "cf-connecting-ip": address } });

/** Sends `count` requests one after another; their statuses in order (each body read). */
async function statuses(count: number, send: (i: number) => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await send(i);
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe("per-address limits under wrangler dev", () => {
  it("120 random team tokens from one address: 100 refused with 401, then 429; other addresses and 127.0.0.1 go on", async () => {
    const random = async () => (await mintToken()).token;
    const seen = await statuses(120, async () => mcpGet(await random(), "203.0.113.5"));
    expect(seen.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(seen.slice(LIMIT)).toEqual(Array(120 - LIMIT).fill(429));
    const over = await mcpGet(token, "203.0.113.5");
    expectThrottled(over);
    expect(((await over.json()) as { error: { message: string } }).error.message).toMatch(/^Too many failed authentications from this address/);
    expect((await mcpGet(await random(), "203.0.113.6")).status).toBe(401);
    expect((await mcpGet(token, "203.0.113.6")).status).toBe(400);
    // Traffic without the header (wrangler dev sets 127.0.0.1): many requests, none failing, none throttled.
    expect(await statuses(150, () => mcpGet(token))).toEqual(Array(150).fill(400));
  });

  it("wrong admin tokens from one address: 100 refusals, each logged with the address and without the token, then 429", async () => {
    const seen = await statuses(110, (i) => adminGet(`wrong-admin-${i}`, "203.0.113.7"));
    expect(seen.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
    expect(seen.slice(LIMIT)).toEqual(Array(10).fill(429));
    expectThrottled(await adminGet(ADMIN_TOKEN, "203.0.113.7"));
    expect((await adminGet(ADMIN_TOKEN, "203.0.113.8")).status).toBe(200);
    await expect.poll(() => proxy.output().match(/"event":"admin_auth"[^\n]*"address":"203\.0\.113\.7"/g)?.length ?? 0).toBe(LIMIT);
    expect(proxy.output()).toMatch(/"event":"throttled","budget":"failed_auth","address":"203\.0\.113\.7","route":"admin"/);
    expect(proxy.output()).not.toContain("wrong-admin-");
  });

  it("100 requests of the OAuth routes from one address, then 429", async () => {
    const tokenRequest = (address: string) =>
      fetch(`${proxy.url}/t/guarded/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": address },
        body: "grant_type=refresh_token&refresh_token=made-up",
      });
    const seen = await statuses(LIMIT, () => tokenRequest("203.0.113.9"));
    expect(seen.filter((s) => s === 429)).toEqual([]);
    expectThrottled(await tokenRequest("203.0.113.9"));
    expect((await tokenRequest("203.0.113.10")).status).not.toBe(429);
  });
});
