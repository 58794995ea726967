// A few thousand generated bad requests at the MCP endpoint and the admin API: every answer is a readable 4xx
// (or a JSON-RPC error), never a 5xx, and nothing changes state.
import { env } from "cloudflare:workers";
import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { seededRandom as random, type SeededRandom } from "../shared/seeded-random.ts";
import { ADMIN, BASE, addToken, connect, seedTeam, replayUrl, workerFetch } from "./helpers.ts";

const deep = (depth: number, leaf: string) => "[".repeat(depth) + leaf + "]".repeat(depth);

/** Bodies that are wrong in one way or another: syntax, types, methods, sizes, nesting, duplicate keys. */
function badBody(r: SeededRandom): string {
  const huge = "x".repeat(r.pick([1_000, 100_000, 1_000_000]));
  const params = r.pick<unknown>([null, 1, "s", [], { tool_name: 5 }, { name: 7 }, { name: "use_tool", arguments: "not an object" }, { uri: 3 }, { cursor: {} }]);
  const candidates = [
    "",
    "{",
    "}",
    "null",
    "[]",
    "[1,2,3]",
    "true",
    '"string"',
    "{\"jsonrpc\":\"2.0\"",
    "\u0000\u0001\u0002",
    `{"jsonrpc":"2.0","id":1,"method":"${huge}"}`,
    JSON.stringify({ jsonrpc: "1.0", id: 1, method: "tools/list" }),
    JSON.stringify({ jsonrpc: "2.0", id: { nested: true }, method: "tools/list" }),
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: r.pick(["nope", "tools/nope", "", "initialize/x", "resources/read", "prompts/get", "completion/complete", "tools/call"]), params }),
    JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "use_tool", arguments: { tool_name: huge, tool_input: { a: huge } } } }),
    JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "discover_tool", arguments: { tool_name: ["array"] } } }),
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool_name":"a/b","tool_name":"up/read_graph","tool_input":{}}}}',
    `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool_name":"up/read_graph","tool_input":${deep(r.pick([50, 500, 5000]), "1")}}}}`,
    deep(r.pick([10, 1000, 100000]), "{}"),
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "nope" } }),
    JSON.stringify({ jsonrpc: "2.0", id: 6, result: {} }),
    JSON.stringify({ jsonrpc: "2.0", id: 7, method: "logging/setLevel", params: { level: "loudest" } }),
  ];
  return r.pick(candidates);
}

function badHeaders(r: SeededRandom, auth: string, sessionId: string): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": r.pick(["application/json", "application/json; charset=utf-8", "text/plain", "", "application/x-www-form-urlencoded"]),
    accept: r.pick(["application/json, text/event-stream", "application/json", "*/*", "text/html", ""]),
    authorization: r.pick([auth, auth, auth, "Bearer nope", "", `Bearer ${"A".repeat(5000)}`]),
  };
  const session = r.pick([sessionId, sessionId, "", "garbage", `${sessionId}x`, "a".repeat(22) + "." + "b".repeat(22)]);
  if (session) headers["mcp-session-id"] = session;
  const version = r.pick(["2025-11-25", "2025-06-18", "2025-03-26", "", "9999-99-99", "x".repeat(300)]);
  if (version) headers["mcp-protocol-version"] = version;
  if (r.next() < 0.1) headers.origin = r.pick(["https://evil.example", "null", "https://app.example"]);
  return headers;
}

async function readAnswer(res: Response): Promise<void> {
  const text = await res.text();
  expect(res.status, text.slice(0, 200)).toBeLessThan(500);
  if (text && (res.headers.get("content-type") ?? "").includes("json")) JSON.parse(text);
}

describe("fuzz", () => {
  it("the MCP endpoint answers 1560 bad requests without a 5xx or a change of state", async () => {
    await seedTeam("fuzz", { mcp: { up: { url: replayUrl("memory") } } });
    const idsBefore = (await listDurableObjectIds(env.SESSIONS)).length;
    const r = random(20261122);
    // Rounds of 120 requests, each with its own token and session: the per-token rate limit (150 a minute in
    // the tests) would otherwise answer most of them with 429 and the fuzz would not reach the session object. Each
    // round comes from its own client address too, for the same reason: about a third of its requests fail to
    // authenticate, and an address is limited to 100 such failures a minute (test/workers/throttle.test.ts).
    for (let round = 0; round < 13; round++) {
      const token = await addToken("fuzz");
      const { client, sessionId } = await connect("fuzz", token);
      await client.listTools();
      const stub = env.SESSIONS.getByName(`fuzz/${sessionId}`);
      // The usage meter's figures (numbers only) and the audit entries waiting to ship are left out: the mix holds
      // calls that really reach the views, and counting and recording those is the meter's and the audit trail's job
      // (test/workers/usage.test.ts, audit.test.ts); everything else must stay as it was.
      const snapshot = () =>
        runInDurableObject(stub, async (_o, state) =>
          JSON.stringify([...(await state.storage.list())].filter(([key]) => key !== "usage" && !key.startsWith("audit:"))),
        );
      const storageBefore = await snapshot();
      const kvBefore = (await env.TEAMS.list()).keys.length;
      for (let i = 0; i < 120; i++) {
        const method = r.pick(["POST", "POST", "POST", "POST", "GET", "DELETE", "PUT", "PATCH"]);
        const headers: Record<string, string> = { ...badHeaders(r, `Bearer ${token}`, sessionId), "cf-connecting-ip": `198.51.100.${round}` };
        // Deleting the session would be a legitimate change: keep DELETE to foreign or malformed ids.
        if (method === "DELETE" && headers["mcp-session-id"] === sessionId) headers["mcp-session-id"] = "garbage";
        const body = method === "POST" || method === "PUT" || method === "PATCH" ? badBody(r) : undefined;
        const res = await workerFetch(`${BASE}/t/fuzz/mcp`, { method, headers, ...(body === undefined ? {} : { body }) });
        await readAnswer(res);
      }
      const storageAfter = await snapshot();
      // On a failure, name the keys that changed (the values may be long).
      const changed = () => {
        const before = new Map(JSON.parse(storageBefore) as Array<[string, unknown]>);
        const after = new Map(JSON.parse(storageAfter) as Array<[string, unknown]>);
        return [...new Set([...before.keys(), ...after.keys()])].filter((k) => JSON.stringify(before.get(k)) !== JSON.stringify(after.get(k)));
      };
      expect(storageAfter, `round ${round}: storage keys changed: ${storageAfter === storageBefore ? "" : changed().join(", ")}`).toBe(storageBefore);
      expect((await env.TEAMS.list()).keys.length).toBe(kvBefore);
      // And the session still works.
      expect((await client.callTool({ name: "use_tool", arguments: { tool_name: "up/read_graph" } })).isError).toBeFalsy();
      await client.close();
    }
    expect((await listDurableObjectIds(env.SESSIONS)).length).toBe(idsBefore + 13);
  });

  it("the admin API answers 1000 bad requests without a 5xx or a change of state", async () => {
    const kvBefore = JSON.stringify((await env.TEAMS.list()).keys.map((k) => k.name));
    const r = random(7);
    const paths = ["/teams/a/config", "/teams/a/tokens", "/teams/a/tokens/zz", "/teams/a/tokens/0123456789abcdef", "/teams/a/secrets", "/teams/a/secrets/X", "/teams/a/secrets/bad-name", "/teams/A!/config", "/teams/a/pins/s/t/approve", "/teams/a/pins", "/teams/" + "x".repeat(100) + "/config", "/unknown"];
    for (let i = 0; i < 1000; i++) {
      const method = r.pick(["GET", "PUT", "POST", "DELETE", "PATCH"]);
      const path = r.pick(paths);
      const auth = r.pick([ADMIN.authorization, "Bearer wrong", ""]);
      const body = method === "PUT" || method === "POST" || method === "PATCH" ? badBody(r) : undefined;
      // A new client address every 100 requests (two thirds of them fail to authenticate), so that the fuzz reaches
      // the routes instead of the per-address limit on failures.
      const headers: Record<string, string> = { "content-type": r.pick(["application/json", "text/plain"]), "cf-connecting-ip": `198.51.100.${100 + Math.floor(i / 100)}` };
      if (auth) headers.authorization = auth;
      // Only bodies that cannot be a valid write: a valid one would (rightly) change state.
      const res = await workerFetch(`${BASE}/admin${path}`, { method, headers, ...(body === undefined ? {} : { body }) });
      await readAnswer(res);
    }
    expect(JSON.stringify((await env.TEAMS.list()).keys.map((k) => k.name))).toBe(kvBefore);
  });
});
