// The pure parts of usage accounting (day keys, the kept window, merging figures, list signatures) and the session's
// meter over an in-memory storage: counts once what should count once, keeps only numbers, survives a new instance,
// hands over and takes back what it could not send. Tokens are counted with js-tiktoken (the benchmarks' tokenizer).
import { getEncoding } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import type { Tool } from "@modelcontextprotocol/server";
import type { FittedCatalog } from "../../src/catalog/budget.ts";
import type { ExposedTool } from "../../src/upstream/registry.ts";
import {
  USAGE_KEY,
  UsageFigures,
  UsageMeter,
  addFigures,
  dayOf,
  daysToPrune,
  directTokens,
  emptyFigures,
  firstDayOf,
  isEmpty,
  listSignature,
  mergeDays,
  type UsageStorage,
} from "../../src/session/usage.ts";
import { waitFor } from "../shared/wait.ts";

const encoder = getEncoding("o200k_base");
const counter = { count: (text: string) => encoder.encode(text, [], []).length };

/** A storage that keeps values as a Durable Object does: a structured copy taken at put time. */
class MemoryStorage implements UsageStorage {
  readonly values = new Map<string, unknown>();
  puts = 0;
  async get(key: string): Promise<unknown> {
    return structuredClone(this.values.get(key));
  }
  async put(key: string, value: unknown): Promise<void> {
    this.puts++;
    this.values.set(key, structuredClone(value));
  }
}

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const tool = (name: string, description: string): Tool => ({ name, description, inputSchema: { type: "object", properties: { q: { type: "string" } } } });
const exposed = (server: string, t: Tool): [string, ExposedTool] => [`${server}/${t.name}`, { exposedName: `${server}/${t.name}`, upstream: server, tool: t }];
const fitted = (description: string, tokens: number): Pick<FittedCatalog, "description" | "tokens"> => ({ description, tokens });
const figures = (over: Partial<Omit<UsageFigures, "answers" | "calls">> & { answers?: Partial<UsageFigures["answers"]>; calls?: Partial<UsageFigures["calls"]> }): UsageFigures => {
  const empty = emptyFigures();
  return { ...empty, ...over, answers: { ...empty.answers, ...over.answers }, calls: { ...empty.calls, ...over.calls } };
};

describe("days and figures", () => {
  it("names UTC days, and a window of n days ending today", () => {
    expect(dayOf(T0)).toBe("2026-11-25");
    expect(dayOf(Date.UTC(2026, 10, 25, 23, 59, 59, 999))).toBe("2026-11-25");
    expect(dayOf(Date.UTC(2026, 10, 26))).toBe("2026-11-26");
    expect(firstDayOf(T0, 1)).toBe("2026-11-25");
    expect(firstDayOf(T0, 30)).toBe("2026-10-27");
    expect(firstDayOf(T0, 90)).toBe("2026-08-28");
  });

  it("prunes the days that have left the window, and only those", () => {
    const days = ["2026-08-27", "2026-08-28", "2026-11-25", "2025-01-01"];
    expect(daysToPrune(days, T0)).toEqual(["2026-08-27", "2025-01-01"]);
    expect(daysToPrune(days, T0, 1)).toEqual(["2026-08-27", "2026-08-28", "2025-01-01"]);
  });

  it("reads figures stored before code mode with no executes as zero, and adds executes", () => {
    const old = { sessions: 1, direct: 2, listed: 3, answers: { lookups: 1, searches: 2, loads: 3 }, calls: { lookups: 1, searches: 1, loads: 1, tools: 4 } };
    const read = UsageFigures.parse(old);
    expect(read.answers.executes).toBe(0);
    expect(read.calls.executes).toBe(0);
    const sum = addFigures(read, figures({ answers: { executes: 40 }, calls: { executes: 2, tools: 5 } }));
    expect(sum.answers).toEqual({ lookups: 1, searches: 2, loads: 3, executes: 40 });
    expect(sum.calls).toEqual({ lookups: 1, searches: 1, loads: 1, tools: 9, executes: 2 });
  });

  it("adds figures field by field and merges days without changing its inputs", () => {
    const a = figures({ sessions: 1, direct: 100, listed: 10, answers: { lookups: 3 }, calls: { lookups: 1, tools: 2 } });
    const b = figures({ sessions: 2, direct: 50, answers: { searches: 4, loads: 5 }, calls: { searches: 1, loads: 1, tools: 1 } });
    expect(addFigures(a, b)).toEqual({
      sessions: 3,
      direct: 150,
      listed: 10,
      answers: { lookups: 3, searches: 4, loads: 5, executes: 0 },
      calls: { lookups: 1, searches: 1, loads: 1, tools: 3, executes: 0 },
    });
    const into = { "2026-11-25": a };
    const merged = mergeDays(into, [{ day: "2026-11-25", figures: b }, { day: "2026-11-26", figures: b }]);
    expect(merged["2026-11-25"]!.sessions).toBe(3);
    expect(merged["2026-11-26"]).toEqual(b);
    expect(into["2026-11-25"]).toEqual(a);
    expect(isEmpty(emptyFigures())).toBe(true);
    expect(isEmpty(figures({ calls: { tools: 1 } }))).toBe(false);
  });

  it("signs a list by its tokens and text, so a different list of the same size differs", () => {
    expect(listSignature(fitted("abc", 10))).toBe(listSignature(fitted("abc", 10)));
    expect(listSignature(fitted("abd", 10))).not.toBe(listSignature(fitted("abc", 10)));
    expect(listSignature(fitted("abc", 11))).not.toBe(listSignature(fitted("abc", 10)));
  });

  it("measures direct exposure as a host pays for the definitions, under their exposed names", () => {
    const t = tool("read", "Reads a thing.");
    const direct = directTokens([exposed("mem", t)[1]], counter);
    expect(direct).toBe(counter.count(JSON.stringify([{ name: "mem/read", description: "Reads a thing.", input_schema: t.inputSchema }])));
  });
});

describe("the session's meter", () => {
  function setUp(storage = new MemoryStorage(), now = () => T0) {
    const meter = new UsageMeter(storage, now);
    let tools = new Map([exposed("mem", tool("read", "Reads the graph."))]);
    meter.attach({ tools: () => tools, counter: async () => counter });
    return { meter, storage, grow: () => (tools = new Map([...tools, exposed("big", tool("write", "Writes many things to the graph, at length."))])) };
  }

  it("counts a start recorded before the stored state was read once, keeping what an earlier instance left", async () => {
    const storage = new MemoryStorage();
    const earlier = setUp(storage).meter;
    await earlier.restore();
    earlier.called("tool");
    await earlier.settle();
    // A new instance (a 2026-era object's first request) records its start before anything has read storage, and
    // before its runtime is attached (so the start is written at once).
    const meter = new UsageMeter(storage, () => T0);
    meter.started(new Date(T0).toISOString());
    meter.called("tool");
    await meter.restore();
    const days = await meter.take();
    expect(days).toHaveLength(1);
    expect(days[0]!.figures.sessions).toBe(1);
    expect(days[0]!.figures.calls.tools).toBe(2);
  });

  it("counts a session once, a list once until it changes, answers by kind, calls by kind; direct is the most reached", async () => {
    const { meter, storage, grow } = setUp();
    await meter.restore();
    meter.started(new Date(T0 - 86_400_000).toISOString());
    meter.started(new Date(T0).toISOString());
    meter.listed(fitted("list one", 200));
    meter.listed(fitted("list one", 200));
    meter.called("lookup", "mem/read: Reads the graph.");
    meter.called("search", "- mem/read: Reads the graph.");
    meter.called("search", "nothing found");
    meter.called("tool");
    await meter.settle();
    const directBefore = directTokens(new Map([exposed("mem", tool("read", "Reads the graph."))]).values(), counter);
    grow();
    meter.called("load", '{"mcp_name":"big"}');
    meter.listed(fitted("list two", 260));
    meter.listed(fitted("list one", 200));
    const days = await meter.take();
    expect(days.map((d) => d.day)).toEqual(["2026-11-24", "2026-11-25"]);
    expect(days[0]!.figures).toEqual(figures({ sessions: 1 }));
    const today = days[1]!.figures;
    expect(today.sessions).toBe(0);
    expect(today.listed).toBe(200 + 260 + 200);
    expect(today.answers).toEqual({
      lookups: counter.count("mem/read: Reads the graph."),
      searches: counter.count("- mem/read: Reads the graph.") + counter.count("nothing found"),
      loads: counter.count('{"mcp_name":"big"}'),
      executes: 0,
    });
    expect(today.calls).toEqual({ lookups: 1, searches: 2, loads: 1, tools: 1, executes: 0 });
    expect(today.direct).toBeGreaterThan(directBefore);
    expect(storage.values.get(USAGE_KEY)).toMatchObject({ counted: true, direct: today.direct, pending: {} });
    // Nothing of any answer text is stored: only numbers and the list signature.
    expect(JSON.stringify([...storage.values])).not.toMatch(/Reads|mcp_name|nothing found|list one/);
    // Nothing new: nothing to hand over.
    expect(await meter.take()).toEqual([]);
  });

  it("counts direct once across a new instance (after an eviction), and keeps what was not sent", async () => {
    const storage = new MemoryStorage();
    const first = setUp(storage);
    await first.meter.restore();
    first.meter.started(new Date(T0).toISOString());
    first.meter.called("tool");
    await first.meter.settle();
    const sent = (storage.values.get(USAGE_KEY) as { direct: number }).direct;
    expect(sent).toBeGreaterThan(0);

    // A new instance over the same storage, the same catalogs: nothing counted twice.
    const second = setUp(storage);
    await second.meter.restore();
    second.meter.started(new Date(T0).toISOString());
    second.meter.called("tool");
    const days = await second.meter.take();
    expect(days).toEqual([{ day: "2026-11-25", figures: figures({ sessions: 1, direct: sent, calls: { tools: 2 } }) }]);
  });

  it("takes back what a failed send could not deliver, and stops writing once closed", async () => {
    const { meter, storage } = setUp();
    await meter.restore();
    meter.called("lookup", "x");
    const days = await meter.take();
    expect(days).toHaveLength(1);
    meter.giveBack(days);
    meter.called("lookup", "y");
    const again = await meter.take();
    expect(again[0]!.figures.calls.lookups).toBe(2);
    meter.close();
    const puts = storage.puts;
    meter.called("tool");
    await meter.settle();
    expect(storage.puts).toBe(puts);
    expect(await meter.take()).toEqual([]);
  });

  it("writes at once what needs no counting, and an answer's count on the next turn, without being asked", async () => {
    const { meter, storage, grow } = setUp();
    await meter.restore();
    const pendingToday = () => (storage.values.get(USAGE_KEY) as { pending: Record<string, UsageFigures> } | undefined)?.pending["2026-11-25"];
    // Before the token table is known, what the session reaches is measured on the next turn.
    meter.called("tool");
    expect(storage.values.has(USAGE_KEY)).toBe(false);
    expect(await waitFor(() => pendingToday()?.calls.tools === 1)).toBe(true);
    const direct = pendingToday()!.direct;
    expect(direct).toBeGreaterThan(0);
    // From then on a call is in storage as it returns; after a catalog change a list is written on the next turn,
    // with what the session now reaches measured (counting every definition never delays an answer).
    meter.called("tool");
    await Promise.resolve();
    expect(pendingToday()!.calls.tools).toBe(2);
    grow();
    meter.listed(fitted("grown", 300));
    await Promise.resolve();
    expect(pendingToday()!.direct).toBe(direct);
    expect(await waitFor(() => pendingToday()?.listed === 300)).toBe(true);
    expect(pendingToday()!.direct).toBeGreaterThan(direct);
    // An answer's text waits for the next turn to be counted.
    meter.called("lookup", "some answer");
    await Promise.resolve();
    expect(pendingToday()!.answers.lookups).toBe(0);
    expect(await waitFor(() => pendingToday()?.answers.lookups === counter.count("some answer"))).toBe(true);
  });

  it("reads an unreadable stored state as a fresh start", async () => {
    const storage = new MemoryStorage();
    storage.values.set(USAGE_KEY, { counted: "yes" });
    const { meter } = setUp(storage);
    await meter.restore();
    meter.started(new Date(T0).toISOString());
    expect((await meter.take())[0]!.figures.sessions).toBe(1);
  });

  it("counts what a direct-view session reaches as what it was sent", async () => {
    const meter = new UsageMeter(new MemoryStorage(), () => T0);
    meter.attach({ tools: () => new Map([exposed("mem", tool("read", "Reads."))]), counter: async () => counter, sentWhole: true });
    await meter.restore();
    meter.called("tool");
    const [day] = await meter.take();
    expect(day!.figures.listed).toBe(day!.figures.direct);
    expect(day!.figures.direct).toBeGreaterThan(0);
  });
});
