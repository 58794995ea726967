// The SSRF guard where it is the only defence: `wrangler dev` reaches loopback and private addresses, so with
// ALLOW_PRIVATE_UPSTREAMS off the proxy itself must refuse them, at write time and again before every connect.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startWranglerDev, type Running } from "../../harness/processes.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import { connectClient, teamCliAsync } from "../../harness/clients.ts";

const ADMIN_TOKEN = "e2e-admin";
let dir: string;
let state: string;
let replay: ReplayServer;
let proxy: Running;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-ssrf-"));
  state = join(dir, "state");
  replay = await startReplayServer({ target: { catalog: loadCorpus("modelcontextprotocol__server-memory") } });
  proxy = await startWranglerDev({
    persistTo: state,
    port: await freePort(),
    vars: { SESSION_KEY: "ssrf", ADMIN_TOKEN, ALLOW_PRIVATE_UPSTREAMS: "false" },
  });
});

afterAll(async () => {
  await Promise.all([proxy?.stop(), replay?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const putConfig = (team: string, config: unknown) =>
  fetch(`${proxy.url}/admin/teams/${team}/config`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(config),
  });

describe("the SSRF guard under wrangler dev", () => {
  it("refuses private, loopback, metadata and internal upstreams in any notation when a config is written", async () => {
    const refused = [
      replay.url("target"),
      "https://127.0.0.1/mcp",
      "https://2130706433/mcp",
      "https://0x7f.0.0.1/mcp",
      "https://0177.0.0.1/mcp",
      "https://127.1/mcp",
      "https://[::1]/mcp",
      "https://[::ffff:127.0.0.1]/mcp",
      "https://10.0.0.8/mcp",
      "https://192.168.1.1/mcp",
      "https://100.64.0.1/mcp",
      "https://169.254.169.254/latest/meta-data",
      "https://[fd00:ec2::254]/",
      "https://metadata.google.internal/",
      "https://localhost/mcp",
      "https://api.internal/mcp",
      "https://user:pass@mcp.example.com/mcp",
    ];
    for (const url of refused) {
      const res = await putConfig("guarded", { mcp: { up: { url } } });
      expect(res.status, url).toBe(400);
      const body = (await res.json()) as { issues: Array<{ path: string; message: string }> };
      expect(body.issues[0]!.path).toBe("mcp.up.url");
      expect(JSON.stringify(body)).not.toContain("pass@");
    }
    expect((await putConfig("guarded", { mcp: { up: { url: "https://mcp.example.com/mcp" } } })).status).toBe(200);
    expect(replay.stats("target").requests).toBe(0);
  });

  it("refuses them again before connecting, for a config stored behind the guard's back", async () => {
    // Stored as if under an older, laxer policy (the CLI with ALLOW_PRIVATE_UPSTREAMS=true).
    const file = join(dir, "lax.json");
    writeFileSync(file, JSON.stringify({ mcp: { up: { url: replay.url("target") } } }));
    expect((await teamCliAsync(["put", "lax", file, "--persist-to", state])).status).toBe(0);
    const token = (await teamCliAsync(["token", "lax", "--persist-to", state])).stdout.trim().split("\n").at(-1)!;
    const { client } = await connectClient(`${proxy.url}/t/lax/mcp`, token);
    const description = (await client.listTools()).tools[0]!.description!;
    expect(description).toContain("up: unavailable — misconfigured: upstream URLs must use https");
    expect(replay.stats("target").requests).toBe(0);
    await client.close();
  });

  it("the team command refuses them too unless ALLOW_PRIVATE_UPSTREAMS=true", async () => {
    const file = join(dir, "private.json");
    writeFileSync(file, JSON.stringify({ mcp: { up: { url: "https://10.1.2.3/mcp" } } }));
    const refused = await teamCliAsync(["put", "cli", file, "--persist-to", state], { ALLOW_PRIVATE_UPSTREAMS: "false" });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("mcp.up.url: upstream URLs cannot point at");
  });

  it("fetches no host's client metadata document from loopback (a CIMD client_id at the authorize and token endpoints)", async () => {
    // Anything that connects is counted (an https fetch of it is a TLS handshake, never answered).
    let connections = 0;
    const listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    try {
      const clientId = `https://127.0.0.1:${(listener.address() as AddressInfo).port}/client.json`;
      const authorize = new URL(`${proxy.url}/t/cimd/oauth/authorize`);
      const params = { response_type: "code", client_id: clientId, redirect_uri: "https://host.example/callback", code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", code_challenge_method: "S256", state: "s" };
      for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
      expect((await fetch(authorize, { redirect: "manual" })).status).toBe(400);
      const token = await fetch(`${proxy.url}/t/cimd/oauth/token`, {
        method: "POST",
        body: new URLSearchParams({ grant_type: "authorization_code", code: "x", redirect_uri: "https://host.example/callback", client_id: clientId, code_verifier: "v".repeat(43) }),
      });
      expect(token.status).toBe(401);
      expect(connections).toBe(0);
    } finally {
      listener.close();
    }
  });
});
