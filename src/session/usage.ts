// Token accounting of one session: what a host would have paid to see every tool the session
// could reach as a direct definition, what it was sent instead (tools/list, discover_tool answers, load_mcp
// listings), and how often each meta-tool was called. Only numbers are kept: an answer's text is counted on the next
// turn of the event loop, after the answer has gone, and let go. The figures not yet sent to the team's index live
// in the session's storage (key `usage`), so an eviction loses none; the session object sends them (`take`) at its
// activity cadence, on its alarm and at its end. The team's index adds them up per UTC day (src/team/team-index.ts).
import * as z from "zod";
import { hostTokens, type FittedCatalog } from "../catalog/budget.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import { logUnreadable } from "../config/keys.ts";
import type { MetaCallKind, UsageRecorder } from "../views/tool-view.ts";
import { accepted } from "../store/kv.ts";
import type { ExposedTool } from "../upstream/registry.ts";

/** How many UTC days of usage a team's index keeps (today included); the admin API answers at most these. */
export const USAGE_DAYS_KEPT = 90;
const DAY_MS = 86_400_000;

const Count = z.number().int().min(0);

/** A team's figures for one UTC day, or a session's share not yet sent (stored as such; the admin API answers them). */
export const UsageFigures = z.object({
  sessions: Count.describe("Sessions that started (each counts on the UTC day it started)."),
  direct: Count.describe("Tokens a host would have paid for every tool the sessions could reach, as direct definitions (per session, the most it could reach at once)."),
  listed: Count.describe("Tokens of the tools/list results the sessions were sent (a list served again unchanged counts once)."),
  answers: z
    .object({
      lookups: Count.describe("discover_tool answers to tool_name lookups."),
      searches: Count.describe("discover_tool answers to query searches."),
      loads: Count.describe("load_mcp listings."),
      executes: Count.default(0).describe("The code view's execute answers (a program's result, console output or failure)."),
    })
    .describe("Tokens of the text the meta-tools sent back."),
  calls: z
    .object({
      lookups: Count.describe("discover_tool calls with tool_name."),
      searches: Count.describe("discover_tool calls with query."),
      loads: Count.describe("load_mcp calls."),
      tools: Count.describe("Upstream tool calls: use_tool, a promoted tool by its own name, a direct-view tool, or a call from a code-view program."),
      executes: Count.default(0).describe("The code view's execute calls (programs run)."),
    })
    .describe("Calls of each kind: counts only, no argument or result is kept."),
});
export type UsageFigures = z.output<typeof UsageFigures>;

/** A UTC day, `YYYY-MM-DD`: sorts as it counts. */
export const DayKey = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a day is YYYY-MM-DD");

/** One day's figures as sessions send them to the team's index (`TeamIndexRpc.addUsage`, typed in src/lib/env.ts). */
export const UsageDay = z.object({ day: DayKey, figures: UsageFigures });
export type UsageDay = z.output<typeof UsageDay>;

/** What a session keeps in its storage under `usage`. */
const UsageState = z.object({
  /** The session is in some day's `sessions` already (the day it started). */
  counted: z.boolean(),
  /** The largest `direct` this session has seen: what it has added to the days so far. */
  direct: Count,
  /** A short signature (tokens and a 32-bit hash of the text) of the last tools/list counted; never the text. */
  lastList: z.string().optional(),
  /** Figures not yet sent to the team's index, by day (a day or two: they are sent within minutes). */
  pending: z.record(DayKey, UsageFigures),
});
type UsageState = z.output<typeof UsageState>;

export const USAGE_KEY = "usage";

/** The UTC day of a moment. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The oldest day a window of `days` days ending today holds (today is day 1). */
export const firstDayOf = (now: number, days: number): string => dayOf(now - (days - 1) * DAY_MS);

export const emptyFigures = (): UsageFigures => ({
  sessions: 0,
  direct: 0,
  listed: 0,
  answers: { lookups: 0, searches: 0, loads: 0, executes: 0 },
  calls: { lookups: 0, searches: 0, loads: 0, tools: 0, executes: 0 },
});

/** Pure: the sum of two sets of figures. */
export function addFigures(a: UsageFigures, b: UsageFigures): UsageFigures {
  return {
    sessions: a.sessions + b.sessions,
    direct: a.direct + b.direct,
    listed: a.listed + b.listed,
    answers: {
      lookups: a.answers.lookups + b.answers.lookups,
      searches: a.answers.searches + b.answers.searches,
      loads: a.answers.loads + b.answers.loads,
      executes: a.answers.executes + b.answers.executes,
    },
    calls: {
      lookups: a.calls.lookups + b.calls.lookups,
      searches: a.calls.searches + b.calls.searches,
      loads: a.calls.loads + b.calls.loads,
      tools: a.calls.tools + b.calls.tools,
      executes: a.calls.executes + b.calls.executes,
    },
  };
}

/** Pure: true when nothing at all was counted. */
export const isEmpty = (f: UsageFigures): boolean => JSON.stringify(f) === JSON.stringify(emptyFigures());

/** Pure: `days` added into `into` by day (a new object; neither input is changed). */
export function mergeDays(into: Readonly<Record<string, UsageFigures>>, days: readonly UsageDay[]): Record<string, UsageFigures> {
  const out = { ...into };
  for (const { day, figures } of days) out[day] = addFigures(out[day] ?? emptyFigures(), figures);
  return out;
}

/** Pure: the days of `days` that have fallen out of a window of `kept` days ending on `now`'s day. */
export const daysToPrune = (days: readonly string[], now: number, kept = USAGE_DAYS_KEPT): string[] => {
  const first = firstDayOf(now, kept);
  return days.filter((day) => day < first);
};

/** Pure: what a tools/list is remembered by, to count the same list once: its tokens and FNV-1a of its text. */
export function listSignature(list: Pick<FittedCatalog, "description" | "tokens">): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < list.description.length; i++) h = Math.imul(h ^ list.description.charCodeAt(i), 0x01000193);
  return `${list.tokens}:${(h >>> 0).toString(16)}`;
}

/** Pure: what a host pays for these tools as direct definitions, under the names the session exposes them by. */
export function directTokens(tools: Iterable<ExposedTool>, counter: TokenCounter): number {
  return hostTokens([...tools].map((t) => ({ name: t.exposedName, description: t.tool.description, inputSchema: t.tool.inputSchema })), counter);
}

/** What the meter uses of the object's storage (a Durable Object's storage is one). */
export interface UsageStorage {
  get(key: string): Promise<unknown>;
  put(key: string, value: unknown, options?: { allowUnconfirmed?: boolean }): Promise<void>;
}

/** What the meter reads of the live runtime: every tool the session can reach now, and the token counter. */
export interface Reach {
  tools(): ReadonlyMap<string, ExposedTool>;
  counter(): Promise<TokenCounter>;
  /**
   * The session's view sends every definition (the direct view): what it is sent is what it can reach, so `listed`
   * grows with `direct` (its own lists are not told to the meter).
   */
  sentWhole?: boolean;
}

const ANSWER_FIELD = { lookup: "lookups", search: "searches", load: "loads", execute: "executes" } as const;
const CALL_FIELD = { lookup: "lookups", search: "searches", load: "loads", tool: "tools", execute: "executes" } as const;

/** An answer's text waiting to be counted, by the day it was sent. */
type WaitingAnswer = { day: string; kind: keyof typeof ANSWER_FIELD; text: string };

/**
 * One session's meter. Recording is a few additions in memory on the request's path; when nothing needs counting
 * (a call, a tools/list whose tokens the list already knows) the state is written at once, a small write that holds
 * no answer back (`allowUnconfirmed`). Answer texts are counted, and what the session can reach measured, on the next
 * turn of the event loop, after the answer, one step at a time; the state is written again then. So is `direct`
 * after the catalog changed: measuring it counts every reachable definition, which never delays an answer.
 */
export class UsageMeter implements UsageRecorder {
  readonly #storage: UsageStorage;
  readonly #now: () => number;
  #state: UsageState = { counted: false, direct: 0, pending: {} };
  #restored: Promise<void> | undefined;
  /** Answer texts waiting to be counted (dropped once counted). */
  #answers: WaitingAnswer[] = [];
  #reach: Reach | undefined;
  #counter: TokenCounter | undefined;
  /** The tool map `direct` was last measured on (the registry keeps one map while nothing changes). */
  #sampled: ReadonlyMap<string, ExposedTool> | undefined;
  #scheduled = false;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** The state changed since it was last written. */
  #dirty = false;

  constructor(storage: UsageStorage, now: () => number = Date.now) {
    this.#storage = storage;
    this.#now = now;
  }

  /** Reads what an earlier instance left (once); counts recorded before it are kept on top. Unreadable: started afresh. */
  restore(): Promise<void> {
    this.#restored ??= this.#storage.get(USAGE_KEY).then((raw) => {
      if (raw === undefined) return;
      const stored = accepted(UsageState, raw);
      if (!stored) return logUnreadable("usage", USAGE_KEY);
      const mine = this.#state;
      this.#state = {
        counted: stored.counted || mine.counted,
        direct: Math.max(stored.direct, mine.direct),
        pending: mergeDays(stored.pending, Object.entries(mine.pending).map(([day, figures]) => ({ day, figures }))),
      };
      const lastList = mine.lastList ?? stored.lastList;
      if (lastList !== undefined) this.#state.lastList = lastList;
    });
    return this.#restored;
  }

  /** The runtime this session now has (again after a reload or an idle close). */
  attach(reach: Reach): void {
    this.#reach = reach;
    this.#sampled = undefined;
  }

  /** The session started (at `createdAt`): it counts once in that day's `sessions`. */
  started(createdAt: string): void {
    if (this.#closed || this.#state.counted) return;
    this.#state.counted = true;
    const at = Date.parse(createdAt);
    this.#day(dayOf(Number.isFinite(at) ? at : this.#now())).sessions += 1;
    this.#recorded();
  }

  listed(list: Pick<FittedCatalog, "description" | "tokens">): void {
    if (this.#closed) return;
    // The same list served again is not counted again: the host replaces what it holds with the same text.
    const signature = listSignature(list);
    if (signature !== this.#state.lastList) {
      this.#state.lastList = signature;
      this.#day(dayOf(this.#now())).listed += list.tokens;
    }
    this.#recorded();
  }

  called(kind: MetaCallKind, answer?: string): void {
    if (this.#closed) return;
    const day = dayOf(this.#now());
    this.#day(day).calls[CALL_FIELD[kind]] += 1;
    if (kind !== "tool" && answer) this.#answers.push({ day, kind, text: answer });
    this.#recorded();
  }

  /** Counts what waits, measures what the session can reach, and writes the state (after whatever is under way). */
  settle(): Promise<void> {
    return this.#enqueue(() => this.#settle());
  }

  /**
   * Settles, then hands over every pending day and forgets it (storage too): the caller sends them to the team's
   * index, and gives them back if that fails.
   */
  take(): Promise<UsageDay[]> {
    return this.#enqueue(async () => {
      await this.#settle();
      const days = Object.entries(this.#state.pending)
        .filter(([, figures]) => !isEmpty(figures))
        .map(([day, figures]) => ({ day, figures }));
      if (days.length === 0) return [];
      this.#state.pending = {};
      this.#dirty = true;
      await this.#persist();
      return days;
    });
  }

  /** Days a failed send could not deliver: pending again, for the next flush. */
  giveBack(days: readonly UsageDay[]): void {
    if (this.#closed) return;
    this.#state.pending = mergeDays(this.#state.pending, days);
    this.#dirty = true;
    this.#recorded();
  }

  /** The session has ended (its storage is about to be wiped): nothing is recorded or written any more. */
  close(): void {
    this.#closed = true;
    this.#answers = [];
  }

  #day(day: string): UsageFigures {
    this.#dirty = true;
    return (this.#state.pending[day] ??= emptyFigures());
  }

  /**
   * Writes the state now when nothing is left to count; else on the next turn, once counted. Measuring what the
   * session can reach counts every reachable definition (100k tokens for a large team), so it never runs on the
   * answer's path.
   */
  #recorded(): void {
    const tools = this.#reach?.tools();
    if (this.#answers.length > 0 || (tools !== undefined && tools !== this.#sampled)) return this.#schedule();
    void this.#persist().catch(() => {});
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setTimeout(() => {
      this.#scheduled = false;
      void this.settle().catch(() => {});
    }, 0);
  }

  #enqueue<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(step, step);
    this.#chain = run.catch(() => {});
    return run;
  }

  async #settle(): Promise<void> {
    if (this.#closed) return;
    const reach = this.#reach;
    const tools = reach?.tools();
    const stale = tools !== undefined && tools !== this.#sampled;
    if (reach && (this.#answers.length > 0 || stale)) {
      // Without the token table (it failed to load) texts go uncounted; the call counts stay.
      const counter = this.#counter ?? (await reach.counter().catch(() => undefined));
      const answers = this.#answers.splice(0);
      if (counter) {
        this.#counter = counter;
        for (const { day, kind, text } of answers) this.#day(day).answers[ANSWER_FIELD[kind]] += counter.count(text);
        if (stale) this.#measure(tools, counter);
      }
    }
    await this.#persist();
  }

  /** Catalogs grow as servers load: the session's `direct` is the most it could reach at any one time. */
  #measure(tools: ReadonlyMap<string, ExposedTool>, counter: TokenCounter): void {
    this.#sampled = tools;
    const direct = directTokens(tools.values(), counter);
    if (direct <= this.#state.direct) return;
    const day = this.#day(dayOf(this.#now()));
    day.direct += direct - this.#state.direct;
    // A direct-view session is sent what it can reach.
    if (this.#reach?.sentWhole) day.listed += direct - this.#state.direct;
    this.#state.direct = direct;
  }

  async #persist(): Promise<void> {
    if (this.#closed || !this.#dirty) return;
    // Never written before what an earlier instance left has been read: a write first would be read back as that
    // instance's figures and counted twice (a 2026-era object counts its start before anything else reads storage).
    await this.restore();
    if (this.#closed || !this.#dirty) return;
    this.#dirty = false;
    await this.#storage.put(USAGE_KEY, this.#state, { allowUnconfirmed: true });
  }
}
