// subscriptions/listen in the 2026-07-28 era: the router sends each stream to its team's index object, whose SDK
// handler acknowledges first, stamps every notification with the subscription id and ends the stream when the client
// goes. A change announced on one team's index reaches that team's streams only; a team holds a bounded number, one
// principal a smaller one, and a stream lasts at most its lifetime.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { ROUTE_HEADERS } from "../../src/lib/env.ts";
import { MAX_LISTEN_STREAMS } from "../../src/modern/listen.ts";
import type { TeamIndex } from "../../src/team/team-index.ts";
import { SETTING_DEFAULTS } from "../../src/lib/settings.ts";
import { BASE, addToken, adminFetch, replayUrl, seedTeam, waitFor, workerFetch } from "./helpers.ts";

const MODERN = "2026-07-28";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const ENVELOPE = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
/** How long a stream is watched for something that must not come. */
const QUIET_MS = 500;

type Filter = { toolsListChanged?: boolean; promptsListChanged?: boolean; resourcesListChanged?: boolean; resourceSubscriptions?: string[] };
interface Message {
  id?: string | number;
  method?: string;
  params?: { notifications?: Filter; _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

const team = (name: string) => seedTeam(name, { mcp: { memory: { url: replayUrl("memory") } } });

const listenBody = (id: string | number, filter: Filter) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "subscriptions/listen", params: { notifications: filter, _meta: ENVELOPE } });

const modernHeaders = (method: string): Record<string, string> => ({
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": MODERN,
  "mcp-method": method,
});

/** An open SSE answer, read message by message (keep-alive comments skipped); a read gives up after `ms`. */
class SseStream {
  readonly #reader: ReadableStreamDefaultReader<string>;
  /** Aborting it is the client going away. */
  readonly controller: AbortController;
  #buffer = "";
  #pending: Promise<ReadableStreamReadResult<string>> | undefined;
  #done = false;

  constructor(response: Response, controller: AbortController) {
    this.controller = controller;
    this.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  }

  /** The next message, or undefined when none came within `ms` or the stream ended. */
  async next(ms = 5_000): Promise<Message | undefined> {
    const deadline = Date.now() + ms;
    for (;;) {
      const end = this.#buffer.indexOf("\n\n");
      if (end >= 0) {
        const frame = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        if (data) return JSON.parse(data) as Message;
        continue;
      }
      const left = deadline - Date.now();
      if (this.#done || left <= 0) return undefined;
      this.#pending ??= this.#reader.read();
      let timer: number | undefined;
      const read = await Promise.race([this.#pending, new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), left)))]);
      if (timer !== undefined) clearTimeout(timer);
      if (read === "timeout") return undefined;
      this.#pending = undefined;
      if (read.done) this.#done = true;
      else this.#buffer += read.value;
    }
  }

  /** The client goes: its request is aborted and the answer's stream cancelled. */
  async close(): Promise<void> {
    this.controller.abort();
    await this.#reader.cancel().catch(() => {});
  }
}

/** A raw listen stream through the Worker, as a host opens it. */
async function listen(teamName: string, token: string, filter: Filter, id: string | number = "sub-1"): Promise<SseStream> {
  const controller = new AbortController();
  const response = await workerFetch(`${BASE}/t/${teamName}/mcp`, {
    method: "POST",
    headers: { ...modernHeaders("subscriptions/listen"), authorization: `Bearer ${token}` },
    body: listenBody(id, filter),
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  return new SseStream(response, controller);
}

/** A request straight to a team's index object, with the router's headers unless others are given. */
function toIndex(teamName: string, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
  return env.TEAM_INDEX.getByName(teamName).fetch(new Request(`${BASE}/t/${teamName}/mcp`, { method: "POST", headers, body, ...(signal ? { signal } : {}) }));
}

const routeHeaders = (teamName: string, method = "subscriptions/listen", tokenId = "test-token"): Record<string, string> => ({
  ...modernHeaders(method),
  [ROUTE_HEADERS.team]: teamName,
  [ROUTE_HEADERS.tokenId]: tokenId,
  [ROUTE_HEADERS.era]: "modern",
});

const streams = (teamName: string) => env.TEAM_INDEX.getByName(teamName).listenStreams();

describe("subscriptions/listen (2026-07-28)", () => {
  it("an admin's config change of one team reaches that team's streams as prompt and resource list changes, and no other team's", async () => {
    const tokenA = await team("listen-put-a");
    const tokenB = await team("listen-put-b");
    const filter = { promptsListChanged: true, resourcesListChanged: true };
    const a = await listen("listen-put-a", tokenA, filter, "pa");
    const b = await listen("listen-put-b", tokenB, filter, "pb");
    expect((await a.next())?.method).toBe("notifications/subscriptions/acknowledged");
    expect((await b.next())?.method).toBe("notifications/subscriptions/acknowledged");
    const put = await adminFetch("PUT", "/teams/listen-put-a/config", { mcp: { memory: { url: replayUrl("memory") }, more: { url: replayUrl("memory") } } });
    expect(put.status).toBe(200);
    const heard = [await a.next(), await a.next()].map((m) => m?.method).sort();
    expect(heard).toEqual(["notifications/prompts/list_changed", "notifications/resources/list_changed"]);
    expect(await b.next(QUIET_MS)).toBeUndefined();
    await Promise.all([a.close(), b.close()]);
  });

  it("acknowledges first, with the subscription id and the filter narrowed to what the proxy advertises", async () => {
    const token = await team("listen-ack");
    const stream = await listen("listen-ack", token, { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ["memory://graph"] }, "ack-7");
    const ack = await stream.next();
    expect(ack?.method).toBe("notifications/subscriptions/acknowledged");
    expect(ack?.params?._meta?.[SUBSCRIPTION_ID]).toBe("ack-7");
    // resources/subscribe is not advertised in this era, so the resource subscription is not honoured.
    expect(ack?.params?.notifications).toEqual({ toolsListChanged: true, promptsListChanged: true });
    expect(await streams("listen-ack")).toBe(1);
    await stream.close();
    expect(await waitFor(async () => (await streams("listen-ack")) === 0)).toBe(true);
  });

  it("a change announced on a team's index reaches that team's streams, tagged with their subscription ids, and no other team's", async () => {
    const tokenA = await team("listen-a");
    const tokenB = await team("listen-b");
    const a = await listen("listen-a", tokenA, { toolsListChanged: true }, "a-1");
    const b = await listen("listen-b", tokenB, { toolsListChanged: true }, "b-1");
    expect((await a.next())?.method).toBe("notifications/subscriptions/acknowledged");
    expect((await b.next())?.method).toBe("notifications/subscriptions/acknowledged");

    await env.TEAM_INDEX.getByName("listen-a").listsChanged({ tools: true });
    const heard = await a.next();
    expect(heard?.method).toBe("notifications/tools/list_changed");
    expect(heard?.params?._meta?.[SUBSCRIPTION_ID]).toBe("a-1");
    expect(await b.next(QUIET_MS)).toBeUndefined();

    // B's stream is live all the same: its own team's change reaches it.
    await env.TEAM_INDEX.getByName("listen-b").listsChanged({ tools: true });
    expect(await b.next()).toMatchObject({ method: "notifications/tools/list_changed", params: { _meta: { [SUBSCRIPTION_ID]: "b-1" } } });
    expect(await a.next(QUIET_MS)).toBeUndefined();
    await Promise.all([a.close(), b.close()]);
  });

  it("a stream hears only the lists its filter names", async () => {
    const token = await team("listen-filter");
    const prompts = await listen("listen-filter", token, { promptsListChanged: true }, "p-1");
    const everything = await listen("listen-filter", token, { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true }, "all-1");
    expect((await prompts.next())?.params?.notifications).toEqual({ promptsListChanged: true });
    expect((await everything.next())?.params?.notifications).toEqual({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });

    // Delivery keeps order: had the tools event reached the prompts-only stream, it would come before the prompts one.
    await env.TEAM_INDEX.getByName("listen-filter").listsChanged({ tools: true });
    await env.TEAM_INDEX.getByName("listen-filter").listsChanged({ prompts: true, resources: true });
    expect((await prompts.next())?.method).toBe("notifications/prompts/list_changed");
    expect(await prompts.next(QUIET_MS)).toBeUndefined();
    const all = [await everything.next(), await everything.next(), await everything.next()].map((m) => m?.method);
    expect(all).toEqual(["notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"]);
    await Promise.all([prompts.close(), everything.close()]);
  });

  it("a v2 client listens, hears the team's tools change, and closing the subscription ends the stream on the server", async () => {
    const token = await team("listen-client");
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/listen-client/mcp`), {
      fetch: workerFetch,
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "listen-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    const heard: Array<{ params?: { _meta?: Record<string, unknown> } }> = [];
    client.setNotificationHandler("notifications/tools/list_changed", (n) => void heard.push(n));

    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    expect(await streams("listen-client")).toBe(1);
    await env.TEAM_INDEX.getByName("listen-client").listsChanged({ tools: true });
    expect(await waitFor(() => heard.length === 1)).toBe(true);
    expect(typeof heard[0]!.params?._meta?.[SUBSCRIPTION_ID]).toBe("string");

    await subscription.close();
    expect(await subscription.closed).toBe("local");
    expect(await waitFor(async () => (await streams("listen-client")) === 0)).toBe(true);
    await client.close();
  });

  it("a raw client that goes away ends its stream on the server", async () => {
    const token = await team("listen-gone");
    const stream = await listen("listen-gone", token, { toolsListChanged: true });
    expect((await stream.next())?.method).toBe("notifications/subscriptions/acknowledged");
    expect(await streams("listen-gone")).toBe(1);
    stream.controller.abort();
    expect(await waitFor(async () => (await streams("listen-gone")) === 0)).toBe(true);
    await stream.close();
  });

  it(`holds at most ${MAX_LISTEN_STREAMS} streams per team; the next one gets the SDK's refusal until one closes`, async () => {
    const token = await team("listen-cap");
    const other = await team("listen-cap-other");
    // Filled straight through the index object (the router's rate limit is per token, and not what this is about), by
    // twenty principals, each within its own bound.
    const held = await Promise.all(
      Array.from({ length: MAX_LISTEN_STREAMS }, async (_, i) => {
        const controller = new AbortController();
        const response = await toIndex("listen-cap", listenBody(`cap-${i}`, { toolsListChanged: true }), routeHeaders("listen-cap", undefined, `token-${i % 20}`), controller.signal);
        return new SseStream(response, controller);
      }),
    );
    expect((await held[0]!.next())?.method).toBe("notifications/subscriptions/acknowledged");
    expect(await streams("listen-cap")).toBe(MAX_LISTEN_STREAMS);

    // Through the router, as a host sees it: in-band, before any acknowledgement.
    const refused = await workerFetch(`${BASE}/t/listen-cap/mcp`, {
      method: "POST",
      headers: { ...modernHeaders("subscriptions/listen"), authorization: `Bearer ${token}` },
      body: listenBody("one-too-many", { toolsListChanged: true }),
    });
    expect(refused.status).toBe(200);
    expect(await refused.json()).toEqual({ jsonrpc: "2.0", id: "one-too-many", error: { code: -32603, message: "Subscription limit reached" } });
    expect(await streams("listen-cap")).toBe(MAX_LISTEN_STREAMS);

    // The bound is the team's: another team is not affected.
    const elsewhere = await listen("listen-cap-other", other, { toolsListChanged: true });
    expect((await elsewhere.next())?.method).toBe("notifications/subscriptions/acknowledged");
    await elsewhere.close();

    await held.pop()!.close();
    expect(await waitFor(async () => (await streams("listen-cap")) === MAX_LISTEN_STREAMS - 1)).toBe(true);
    const again = await listen("listen-cap", token, { toolsListChanged: true }, "again");
    expect((await again.next())?.params?._meta?.[SUBSCRIPTION_ID]).toBe("again");
    await Promise.all([again, ...held].map((s) => s.close()));
    expect(await waitFor(async () => (await streams("listen-cap")) === 0)).toBe(true);
  });

  it(`holds at most ${SETTING_DEFAULTS.listenStreamsPerPrincipal} streams per token: the next is refused in band, naming why, while another token of the team gets its stream`, async () => {
    const per = SETTING_DEFAULTS.listenStreamsPerPrincipal;
    const token = await team("listen-per-token");
    const other = await addToken("listen-per-token");
    const held: SseStream[] = [];
    for (let i = 0; i < per; i++) {
      const stream = await listen("listen-per-token", token, { toolsListChanged: true }, `mine-${i}`);
      expect((await stream.next())?.method).toBe("notifications/subscriptions/acknowledged");
      held.push(stream);
    }
    const refused = await workerFetch(`${BASE}/t/listen-per-token/mcp`, {
      method: "POST",
      headers: { ...modernHeaders("subscriptions/listen"), authorization: `Bearer ${token}` },
      body: listenBody("one-too-many", { toolsListChanged: true }),
    });
    expect(refused.status).toBe(200);
    const answer = (await refused.json()) as Message;
    expect(answer).toMatchObject({ id: "one-too-many", error: { code: -32603 } });
    expect(answer.error?.message).toContain(`already holds ${per} listen streams`);
    expect(await streams("listen-per-token")).toBe(per);

    // The team's other token is not held back by it.
    const theirs = await listen("listen-per-token", other, { toolsListChanged: true }, "theirs");
    expect((await theirs.next())?.method).toBe("notifications/subscriptions/acknowledged");

    // One of the token's streams closed, it may open one again.
    await held.pop()!.close();
    expect(await waitFor(async () => (await streams("listen-per-token")) === per)).toBe(true);
    const again = await listen("listen-per-token", token, { toolsListChanged: true }, "again");
    expect((await again.next())?.method).toBe("notifications/subscriptions/acknowledged");
    await Promise.all([...held, theirs, again].map((s) => s.close()));
  });

  it("ends a stream at its maximum lifetime with the listen request's result, the protocol's graceful close; the host listens again", async () => {
    const token = await team("listen-lifetime");
    // The lifetime, shortened for this team's index before its first stream (the setting is LISTEN_STREAM_MAX_SECONDS).
    await runInDurableObject(env.TEAM_INDEX.getByName("listen-lifetime"), (index: TeamIndex) => {
      index.listenLimits = { ...index.listenLimits, lifetimeMs: 300 };
    });
    const stream = await listen("listen-lifetime", token, { toolsListChanged: true }, "short-1");
    expect((await stream.next())?.method).toBe("notifications/subscriptions/acknowledged");
    const closing = await stream.next();
    expect(closing).toMatchObject({ id: "short-1", result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: "short-1" } } });
    expect(await waitFor(async () => (await streams("listen-lifetime")) === 0)).toBe(true);

    const again = await listen("listen-lifetime", token, { toolsListChanged: true }, "short-2");
    expect((await again.next())?.method).toBe("notifications/subscriptions/acknowledged");
    await again.close();
  });

  it("serves only the router's listen requests: other methods, missing route headers and another team's name are refused", async () => {
    await team("listen-route");
    const body = listenBody(3, { toolsListChanged: true });
    // No route headers at all, the 2025 era's, and the headers naming another team than this index's.
    const { [ROUTE_HEADERS.era]: _era, ...noEra } = routeHeaders("listen-route");
    for (const headers of [modernHeaders("subscriptions/listen"), noEra, routeHeaders("someone-else")]) {
      const res = await toIndex("listen-route", body, headers);
      expect(res.status).toBe(404);
      await res.body?.cancel();
    }
    // Another method of the era, even with the router's headers: the era's unknown-method answer.
    const list = await toIndex("listen-route", JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list", params: { _meta: ENVELOPE } }), routeHeaders("listen-route", "tools/list"));
    expect(list.status).toBe(404);
    expect(await list.json()).toMatchObject({ id: 4, error: { code: -32601 } });
    // A header that claims listen over a body that is not: the SDK's header/body mismatch.
    const mismatch = await toIndex("listen-route", JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list", params: { _meta: ENVELOPE } }), routeHeaders("listen-route"));
    expect(mismatch.status).toBe(400);
    expect(await mismatch.json()).toMatchObject({ id: 5, error: { code: -32020 } });
    expect(await streams("listen-route")).toBe(0);
  });
});
