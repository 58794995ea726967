// The fault suite: one misbehaving upstream per test, what the host must see, and proof that no session state
// was lost (the catalog, the loaded set and the counters are as they should be afterwards).
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { errorKindOf } from "../../src/lib/errors.ts";
import type { SessionObject } from "../../src/session/object.ts";
import { connect, discoverDescription, loadMcp, releaseGate, replayControl, replayStats, replayUrl, seedTeam, text, waitFor } from "./helpers.ts";

/** A session with the faulty upstream beside a healthy one; returns the client and a state check. */
async function withFault(team: string, route: string, extra: Record<string, unknown> = {}) {
  const token = await seedTeam(team, { mcp: { bad: { url: replayUrl(route), timeout: 2000, ...extra }, good: { url: replayUrl("memory") } } });
  const connected = await connect(team, token);
  const before = await discoverDescription(connected.client);
  /** The catalog is unchanged and the healthy upstream still answers. */
  const intact = async () => {
    expect(await discoverDescription(connected.client)).toBe(before);
    const ok = await connected.client.callTool({ name: "use_tool", arguments: { tool_name: "good/read_graph" } });
    expect(ok.isError).toBeFalsy();
  };
  return { ...connected, token, intact };
}

/** Arguments the memory server's schemas take (create_entities needs its list; the rest take none). */
const INPUTS: Record<string, Record<string, unknown>> = { create_entities: { entities: [] } };
const call = (client: Awaited<ReturnType<typeof connect>>["client"], tool: string) =>
  client.callTool({ name: "use_tool", arguments: { tool_name: tool, tool_input: INPUTS[tool.slice(tool.indexOf("/") + 1)] ?? {} } });

const gateStats = (team: string, sessionId: string) =>
  runInDurableObject(env.SESSIONS.getByName(`${team}/${sessionId}`), (instance: SessionObject) => ({ ...instance.gate!.stats }));

describe("upstream errors", () => {
  it("500 on a call: an isError naming the server and status; nothing else changes", async () => {
    const s = await withFault("f-500", "flt-500");
    const r = await call(s.client, "bad/read_graph");
    expect(r.isError).toBe(true);
    expect(text(r)).toContain('"bad" answered HTTP 500');
    expect(errorKindOf(r)).toEqual({ kind: "http", upstream: "bad", status: 500 });
    await s.intact();
    await s.client.close();
  });

  it("502 at initialize: the server is unavailable, the others are served", async () => {
    const token = await seedTeam("f-502", { mcp: { bad: { url: replayUrl("flt-502") }, good: { url: replayUrl("memory") } } });
    const { client } = await connect("f-502", token);
    const description = await discoverDescription(client);
    expect(description).toContain("bad: unavailable — HTTP 502");
    expect(description).toContain("good:\n- add_observations:");
    await client.close();
  });

  it("429 with Retry-After within the timeout: waits it out and tries once more", async () => {
    const s = await withFault("f-429", "flt-429", { timeout: 5000 });
    const r = await call(s.client, "bad/create_entities");
    expect(r.isError).toBeFalsy();
    expect((await replayStats("flt-429")).methods["tools/call"]).toBe(2);
    await s.intact();
    await s.client.close();
  });

  it("429 with a Retry-After longer than the timeout: reported at once, not waited for", async () => {
    const s = await withFault("f-429l", "flt-429-long");
    const r = await call(s.client, "bad/read_graph");
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("HTTP 429");
    await s.intact();
    await s.client.close();
  });

  it("HTML instead of JSON, and broken JSON: a readable protocol error", async () => {
    for (const [team, route] of [["f-html", "flt-html"], ["f-json", "flt-json"]] as const) {
      const s = await withFault(team, route);
      const r = await call(s.client, "bad/create_entities");
      expect(r.isError).toBe(true);
      // The upstream answered, just not in MCP: reported as such, not as a broken connection or unknown outcome.
      expect(text(r)).toMatch(/^bad\/create_entities failed: "bad" broke the MCP protocol \(.+\)$/);
      expect(errorKindOf(r)?.kind).toBe("protocol");
      await s.intact();
      await s.client.close();
    }
  });

  it("a response with the wrong id: the call times out with a clear message", async () => {
    const s = await withFault("f-id", "flt-wrong-id", { timeout: 400 });
    const r = await call(s.client, "bad/create_entities");
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("did not answer within 400 ms");
    expect(errorKindOf(r)).toEqual({ kind: "timeout", upstream: "bad" });
    await s.intact();
    await s.client.close();
  });
});

describe("broken connections", () => {
  it("a stream cut mid-answer: a read-only tool is tried once more and succeeds", async () => {
    const s = await withFault("f-cut-ro", "flt-cut-ro");
    const r = await call(s.client, "bad/read_graph");
    expect(r.isError).toBeFalsy();
    expect((await replayStats("flt-cut-ro")).methods["tools/call"]).toBe(2);
    await s.intact();
    await s.client.close();
  });

  it("a stream cut mid-answer: a tool that changes things is not repeated; the outcome is reported unknown", async () => {
    const s = await withFault("f-cut-rw", "flt-cut-rw");
    const r = await call(s.client, "bad/create_entities");
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("may or may not have run");
    expect(errorKindOf(r)?.kind).toBe("unknown_outcome");
    expect((await replayStats("flt-cut-rw")).calls.filter((c) => c.name === "create_entities")).toHaveLength(1);
    // The next call works on a new connection.
    expect((await call(s.client, "bad/create_entities")).isError).toBeFalsy();
    await s.intact();
    await s.client.close();
  });

  it("an upstream that forgets its sessions: a new upstream session, the call once more", async () => {
    const s = await withFault("f-forget", "flt-forget");
    expect((await call(s.client, "bad/create_entities")).isError).toBeFalsy();
    const before = (await replayStats("flt-forget")).methods.initialize ?? 0;
    await replayControl("forget", "flt-forget");
    const r = await call(s.client, "bad/create_entities");
    expect(r.isError).toBeFalsy();
    expect((await replayStats("flt-forget")).methods.initialize).toBe(before + 1);
    await s.intact();
    await s.client.close();
  });

  it("a call that breaks drops only its own connection, not the new one other calls opened meanwhile", async () => {
    const s = await withFault("f-own", "flt-own");
    const initializes = async () => (await replayStats("flt-own")).methods.initialize ?? 0;
    const opened = await initializes();
    // A call is held upstream on the session's first connection.
    const held = call(s.client, "bad/create_entities");
    for (let i = 0; i < 100 && !(await replayStats("flt-own")).methods["tools/call"]; i++) await new Promise((r) => setTimeout(r, 20));
    // The upstream forgets that connection's session. Two calls find out: one ends the old upstream session (its
    // DELETE takes 400 ms here), the other opens a new connection meanwhile; both succeed on the new one.
    await replayControl("forget", "flt-own");
    const [b, d] = await Promise.all([call(s.client, "bad/read_graph"), call(s.client, "bad/read_graph")]);
    expect(b.isError, text(b)).toBeFalsy();
    expect(d.isError, text(d)).toBeFalsy();
    expect(await initializes()).toBe(opened + 1);
    // The held call broke with the old connection: an unknown outcome (create_entities is not repeatable)…
    const broken = await held;
    expect(broken.isError).toBe(true);
    expect(text(broken)).toContain("may or may not have run");
    expect(await releaseGate("flt-own")).toBe(1);
    // …and it did not take the new connection down with it: the next call uses it, no third initialize.
    expect((await call(s.client, "bad/read_graph")).isError).toBeFalsy();
    expect(await initializes()).toBe(opened + 1);
    await s.intact();
    await s.client.close();
  });

  it("an upstream that goes down and comes back: an error while down, served again after", async () => {
    const s = await withFault("f-flap", "flt-flap");
    await replayControl("down", "flt-flap");
    const down = await call(s.client, "bad/read_graph");
    expect(down.isError).toBe(true);
    await replayControl("up", "flt-flap");
    const up = await call(s.client, "bad/read_graph");
    expect(up.isError).toBeFalsy();
    await s.intact();
    await s.client.close();
  });
});

describe("limits", () => {
  it("a 50 MB result is refused with a clear error, counted, and the session goes on", async () => {
    const s = await withFault("f-huge", "flt-huge", { timeout: 20000 });
    const r = await call(s.client, "bad/read_graph");
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/larger than \d+ bytes; it was refused/);
    expect((await gateStats("f-huge", s.sessionId)).tooLarge).toBe(1);
    await s.intact();
    await s.client.close();
  });

  it("frees a timed-out request's connection slot at once: eight timeouts do not wedge the session", async () => {
    const token = await seedTeam("f-wedge", { mcp: { bad: { url: replayUrl("hang"), timeout: 200 }, good: { url: replayUrl("memory") } } });
    const { client, sessionId } = await connect("f-wedge", token);
    await discoverDescription(client);
    for (let i = 0; i < 8; i++) {
      const r = await call(client, "bad/read_graph");
      expect(text(r)).toContain("did not answer within 200 ms");
    }
    const slots = () => runInDurableObject(env.SESSIONS.getByName(`f-wedge/${sessionId}`), (instance: SessionObject) => instance.gate!.inFlight);
    // The last cancellation is on its way as the last result arrives.
    expect(await waitFor(async () => (await slots()) === 0, { tries: 50 })).toBe(true);
    expect((await call(client, "good/read_graph")).isError).toBeFalsy();
    await client.close();
  });

  it("never has more than 6 upstream requests in flight, even with 10 upstreams connecting at once", async () => {
    const mcp = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`s${i}`, { url: replayUrl("flt-slow") }]));
    // The whole catalog (the largest budget): the test reads each server's lines.
    const token = await seedTeam("f-slots", { catalog_budget: 200_000, mcp });
    const { client, sessionId } = await connect("f-slots", token);
    const description = await discoverDescription(client);
    for (let i = 0; i < 10; i++) expect(description).toContain(`s${i}:\n- add_observations:`);
    const stats = await gateStats("f-slots", sessionId);
    expect(stats.peakInFlight).toBeGreaterThan(1);
    expect(stats.peakInFlight).toBeLessThanOrEqual(6);
    await client.close();
  });
});

describe("load_mcp and eviction under stress", () => {
  it("20 concurrent load_mcp of one server: exactly one initialize, 20 equal listings", async () => {
    const token = await seedTeam("f-20", { mcp: { one: { url: replayUrl("flt-conc"), description: "Loaded by many at once." } } });
    const { client } = await connect("f-20", token);
    const results = await Promise.all(Array.from({ length: 20 }, () => loadMcp(client, "one")));
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(new Set(results.map((r) => JSON.stringify(r.structuredContent))).size).toBe(1);
    expect((await replayStats("flt-conc")).methods.initialize).toBe(1);
    await client.close();
  });

  it("10 upstreams loaded at once while the host holds its stream open: all served", async () => {
    const mcp = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`e${i}`, { url: env.EVERYTHING_URL, description: `Reference server copy ${i}.` }]));
    const token = await seedTeam("f-10", { mcp });
    const { client, sessionId } = await connect("f-10", token);
    const loaded = await Promise.all(Array.from({ length: 10 }, (_, i) => loadMcp(client, `e${i}`)));
    expect(loaded.every((r) => !r.isError)).toBe(true);
    const sums = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.callTool({ name: "use_tool", arguments: { tool_name: `e${i}/get-sum`, tool_input: { a: i, b: 1 } } })),
    );
    sums.forEach((r, i) => expect(text(r)).toContain(`is ${i + 1}`));
    expect(await discoverDescription(client)).not.toContain("<mcp_servers>");
    expect((await gateStats("f-10", sessionId)).peakInFlight).toBeLessThanOrEqual(6);
    await client.close();
  });

  it("the object dies in the middle of a use_tool: the host gets an error, the session and its state live on", async () => {
    const token = await seedTeam("f-die", { mcp: { held: { url: replayUrl("flt-gate-call") }, lazy: { url: replayUrl("memory"), description: "Lazy." } } });
    const first = await connect("f-die", token);
    await loadMcp(first.client, "lazy");
    const before = await discoverDescription(first.client);
    const pending = call(first.client, "held/read_graph").then(
      (r) => r,
      (e: unknown) => e,
    );
    for (let i = 0; i < 100 && !(await replayStats("flt-gate-call")).methods["tools/call"]; i++) await new Promise((r) => setTimeout(r, 20));
    await abortAllDurableObjects();
    await releaseGate("flt-gate-call");
    const outcome = await Promise.race([pending, new Promise((r) => setTimeout(() => r("no answer"), 3000))]);
    expect(outcome === "no answer" || outcome instanceof Error || (outcome as { isError?: boolean }).isError === true).toBe(true);
    await first.client.close().catch(() => {});

    const again = await connect("f-die", token, first.sessionId);
    expect(await discoverDescription(again.client)).toBe(before);
    expect((await call(again.client, "held/read_graph")).isError).toBeFalsy();
    expect((await call(again.client, "lazy/read_graph")).isError).toBeFalsy();
    await again.client.close();
  });
});
