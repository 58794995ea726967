// What one simulated host does: MCP sessions back to back, each its own SDK Client over streamable HTTP, calling
// a healthy and a chaos tool every round; and the tally of what the hosts saw (each call, its error classified).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { between, now, short, sleep } from "./clock.ts";
import { ABANDON_EVERY, CLIENT_TIMEOUT_MS, MAX_TRANSPORT_STREAK, type SoakOptions } from "./options.ts";
import { errorKindOf } from "../../src/lib/errors.ts";

export type Upstream = "healthy" | "chaos";

export interface CallEvent {
  upstream: Upstream;
  tool: string;
  /** ms since the run started. */
  start: number;
  end: number;
  ok: boolean;
  /** The error class when not ok; "transport" when the SDK client threw. */
  kind?: string;
  /** The session's round (0: the first calls after tools/list). */
  round: number;
}

export interface Totals {
  events: CallEvent[];
  transportFailures: number;
  /** Transport failures by where they happened (initialize, tools/list, use_tool on …, DELETE). */
  transportByStep: Record<string, number>;
  transportSamples: string[];
  otherSamples: string[];
  /** The first text the host got for each error kind. */
  kindSamples: Record<string, string>;
  /** HTTP requests the hosts sent to the proxy (POST, GET and DELETE). */
  proxyRequests: number;
  sessionsStarted: number;
  sessionsDeleted: number;
  sessionsAbandoned: number;
  /** Sessions whose catalog showed the chaos upstream as unavailable at start. */
  sessionsChaosUnavailable: number;
  /** Sessions whose catalog lacked the healthy upstream's tools (an isolation failure). */
  sessionsHealthyMissing: number;
  open: number;
  peakOpen: number;
  /** The first errors the SDK client reported outside requests (e.g. its GET stream breaking), while the session was open. */
  streamSamples: string[];
}

export const newTotals = (): Totals => ({
  events: [],
  transportFailures: 0,
  transportByStep: {},
  transportSamples: [],
  otherSamples: [],
  kindSamples: {},
  proxyRequests: 0,
  sessionsStarted: 0,
  sessionsDeleted: 0,
  sessionsAbandoned: 0,
  sessionsChaosUnavailable: 0,
  sessionsHealthyMissing: 0,
  open: 0,
  peakOpen: 0,
  streamSamples: [],
});

/** What every host shares: where the proxy is, until when to run, and the tally. */
export interface Hosts {
  options: SoakOptions;
  url: string;
  token: string;
  /** ms since the run started. */
  runEnd: number;
  totals: Totals;
}

function transportFailure(totals: Totals, step: string, err: unknown): void {
  totals.transportFailures++;
  totals.transportByStep[step] = (totals.transportByStep[step] ?? 0) + 1;
  if (totals.transportSamples.length < 8) totals.transportSamples.push(`${step}: ${short(err)}`);
}

/** The class of a use_tool isError result, by the kind the proxy puts in `_meta` (src/lib/errors.ts, ERROR_META_KEY). */
export function classify(result: CallToolResult): string {
  const meta = errorKindOf(result);
  switch (meta?.kind) {
    case "unknown_tool":
      return "not in the session's catalog";
    case "unavailable":
      return "unavailable (tried again at once)";
    case "unknown_outcome":
      return "unknown outcome";
    case "unreachable":
      return "unreachable";
    case "http":
      return `HTTP ${meta.status}`;
    case "timeout":
      return "timeout";
    case "expired":
      return "session expired";
    case "too_large":
      return "too large";
    case "rpc":
      return "upstream JSON-RPC error";
    case "throttled":
      return "throttled (reconnect budget)";
    case "protocol":
      return "protocol error";
    case "closed":
      return "connection closed";
    default:
      return "other";
  }
}

const textOf = (result: CallToolResult) => (result.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

/** One use_tool call in the session's `round`; the replay upstream echoes tool and arguments, which must be the call's own. */
async function call(
  totals: Totals,
  client: Client,
  upstream: Upstream,
  tool: string,
  input: Record<string, unknown>,
  round: number,
): Promise<"ok" | "error" | "transport"> {
  const start = now();
  let result: CallToolResult;
  try {
    result = (await client.callTool({ name: "use_tool", arguments: { tool_name: `${upstream}/${tool}`, tool_input: input } }, undefined, {
      timeout: CLIENT_TIMEOUT_MS,
    })) as CallToolResult;
  } catch (err) {
    transportFailure(totals, `use_tool on ${upstream}`, err);
    totals.events.push({ upstream, tool, start, end: now(), ok: false, kind: "transport", round });
    return "transport";
  }
  const end = now();
  const text = textOf(result);
  if (result.isError) {
    const kind = classify(result);
    if (kind === "other" && totals.otherSamples.length < 8) totals.otherSamples.push(`${upstream}/${tool}: ${text.slice(0, 300)}`);
    totals.kindSamples[kind] ??= text.slice(0, 400);
    totals.events.push({ upstream, tool, start, end, ok: false, kind, round });
    return "error";
  }
  if (!echoes(text, tool, input)) {
    if (totals.otherSamples.length < 8) totals.otherSamples.push(`wrong answer from ${upstream}/${tool}: ${text.slice(0, 200)}`);
    totals.events.push({ upstream, tool, start, end, ok: false, kind: "wrong answer", round });
    return "error";
  }
  totals.events.push({ upstream, tool, start, end, ok: true, round });
  return "ok";
}

/** Whether an answer is the replay upstream's echo of this very call. */
function echoes(text: string, tool: string, input: Record<string, unknown>): boolean {
  let echoed: { tool?: unknown; arguments?: unknown } = {};
  try {
    echoed = JSON.parse(text) as typeof echoed;
  } catch {
    // not the replay's answer: a wrong answer
  }
  return echoed.tool === tool && JSON.stringify(echoed.arguments ?? {}) === JSON.stringify(input);
}

/** One round: in parallel, a healthy call and both chaos calls (read-only read_graph, non-idempotent create_entities). */
function playRound(totals: Totals, client: Client, number: number, round: number): Promise<Array<"ok" | "error" | "transport">> {
  const nonce = `s${number}-r${round}`;
  const healthy =
    round % 2 === 0
      ? call(totals, client, "healthy", "echo", { message: nonce }, round)
      : call(totals, client, "healthy", "get-sum", { a: number, b: round }, round);
  return Promise.all([
    healthy,
    call(totals, client, "chaos", "read_graph", {}, round),
    call(totals, client, "chaos", "create_entities", { entities: [{ name: nonce, entityType: "soak", observations: [] }] }, round),
  ]);
}

/** Rounds until the session's lifetime or the run is over, or its requests keep failing at the transport level. */
async function rounds(h: Hosts, client: Client, number: number): Promise<void> {
  const ends = Math.min(h.runEnd, now() + between(h.options.lifetimeMs));
  let streak = 0;
  for (let r = 0; now() < ends && r < 10_000; r++) {
    const outcomes = await playRound(h.totals, client, number, r);
    streak = outcomes.every((o) => o === "transport") ? streak + 1 : 0;
    if (streak >= MAX_TRANSPORT_STREAK) break;
    await sleep(between(h.options.thinkMs));
  }
}

/** Reads the session's catalog: false (a transport failure noted) when tools/list failed. */
async function checkCatalog(totals: Totals, client: Client): Promise<boolean> {
  let catalog = "";
  try {
    const list = await client.listTools(undefined, { timeout: CLIENT_TIMEOUT_MS });
    catalog = list.tools.find((t) => t.name === "discover_tool")?.description ?? "";
  } catch (err) {
    transportFailure(totals, "tools/list", err);
    return false;
  }
  if (/^chaos: unavailable/m.test(catalog)) totals.sessionsChaosUnavailable++;
  if (!/^healthy:$/m.test(catalog) || !/^- echo:/m.test(catalog)) totals.sessionsHealthyMissing++;
  return true;
}

/** DELETE for the session, within CLIENT_TIMEOUT_MS (the SDK puts no time limit on it; the client's close() aborts it). */
async function terminate(totals: Totals, transport: StreamableHTTPClientTransport): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      transport.terminateSession(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer to DELETE within ${CLIENT_TIMEOUT_MS} ms`)), CLIENT_TIMEOUT_MS);
      }),
    ]);
    totals.sessionsDeleted++;
  } catch (err) {
    transportFailure(totals, "DELETE", err);
  } finally {
    clearTimeout(timer);
  }
}

/** One session, from initialize to DELETE (every ABANDON_EVERY-th one is abandoned instead). */
async function session(h: Hosts, number: number): Promise<void> {
  const totals = h.totals;
  const transport = new StreamableHTTPClientTransport(new URL(h.url), {
    requestInit: { headers: { Authorization: `Bearer ${h.token}` } },
    fetch: (input, init) => (totals.proxyRequests++, fetch(input, init)),
  });
  const client = new Client({ name: "soak-host", version: "1.0.0" });
  let closing = false;
  client.onerror = (err) => {
    if (closing) return;
    if (totals.streamSamples.length < 5) totals.streamSamples.push(short(err));
  };
  try {
    await client.connect(transport, { timeout: CLIENT_TIMEOUT_MS });
  } catch (err) {
    transportFailure(totals, "initialize", err);
    closing = true;
    await client.close().catch(() => {});
    return;
  }
  totals.sessionsStarted++;
  totals.open++;
  totals.peakOpen = Math.max(totals.peakOpen, totals.open);
  const abandon = number % ABANDON_EVERY === ABANDON_EVERY - 1;
  try {
    if (await checkCatalog(totals, client)) await rounds(h, client, number);
  } finally {
    totals.open--;
    closing = true;
    if (abandon) totals.sessionsAbandoned++;
    else await terminate(totals, transport);
    await client.close().catch(() => {});
  }
}

/** One host: sessions back to back until the run ends. */
async function host(h: Hosts, index: number, next: () => number): Promise<void> {
  await sleep((h.options.staggerMs * index) / h.options.sessions);
  for (let i = 0; now() < h.runEnd && i < 10_000; i++) {
    const before = h.totals.transportFailures;
    await session(h, next());
    // A session that could not even start: do not spin.
    if (h.totals.transportFailures > before) await sleep(1_000);
  }
}

/** Every host, until the run ends; sessions are numbered in the order they start. */
export function runHosts(h: Hosts): Promise<void[]> {
  let sessionNumber = 0;
  return Promise.all(Array.from({ length: h.options.sessions }, (_, i) => host(h, i, () => sessionNumber++)));
}
