// Bench-only: a team's audit trail read back through the admin API (GET /admin/teams/<team>/audit, every page) and
// held against the tool calls a driver made. Each call carries a traceparent of its own (`_meta.traceparent`), which
// its entry records, so the reading pairs calls and entries one to one: an answered call without an entry is missing,
// a call with two entries is a duplicate, an entry of no call of ours is a stray.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";

/** A new W3C traceparent: a random trace id and parent id, sampled. */
export const newTraceparent = (): string => `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`;

/** What the accounting reads of an entry. */
interface TrailEntry {
  id: string;
  kind: string;
  tool: string;
  outcome: string;
  traceparent?: string;
}

export interface TrailReader {
  /** The proxy's base URL (`http://127.0.0.1:<port>`). */
  base: string;
  adminToken: string;
  team: string;
  /** Only this tool's entries (`server/tool`). */
  tool: string;
}

const PAGE = 1000;

/** Every entry of the tool at or after `since` (ms since the epoch), newest first, page after page. */
export async function readTrail(reader: TrailReader, since: number): Promise<TrailEntry[]> {
  const entries: TrailEntry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const query = new URLSearchParams({ since: new Date(since).toISOString(), tool: reader.tool, limit: String(PAGE) });
    if (cursor) query.set("cursor", cursor);
    const res = await fetch(`${reader.base}/admin/teams/${reader.team}/audit?${query}`, { headers: { authorization: `Bearer ${reader.adminToken}` } });
    if (!res.ok) throw new Error(`reading the audit trail of ${reader.team}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    const page = (await res.json()) as { entries: TrailEntry[]; next: string | null };
    entries.push(...page.entries);
    cursor = page.next;
    if (!cursor || page.entries.length === 0) return entries;
  }
  throw new Error(`the audit trail of ${reader.team} did not end within 10000 pages`);
}

export interface Accounting {
  /** Entries of the answered calls (each counted once). */
  found: number;
  /** Answered calls without an entry (must be 0). */
  missing: number;
  /** Answered calls with more than one entry (must be 0). */
  duplicates: number;
  /** Entries that name no call of ours, or a call whose answer was an error (must be 0 in a run without errors). */
  strays: number;
  /** Entries of our calls whose outcome is not `ok`. */
  notOk: number;
}

/** Pairs `answered` calls (by traceparent) with `entries`. */
export function account(answered: ReadonlySet<string>, entries: readonly TrailEntry[]): Accounting {
  const seen = new Map<string, number>();
  let strays = 0;
  let notOk = 0;
  for (const entry of entries) {
    const trace = entry.traceparent;
    if (trace === undefined || !answered.has(trace)) {
      strays++;
      continue;
    }
    seen.set(trace, (seen.get(trace) ?? 0) + 1);
    if (entry.outcome !== "ok" || entry.kind !== "tool_call") notOk++;
  }
  let duplicates = 0;
  for (const count of seen.values()) if (count > 1) duplicates++;
  return { found: seen.size, missing: answered.size - seen.size, duplicates, strays, notOk };
}

export interface TrailWait {
  accounting: Accounting;
  /**
   * From the last answer to the end of the read that found every entry (an upper bound: they may have been there
   * sooner); NaN when some were still missing at the bound.
   */
  drainMs: number;
  /** Reads of the trail it took (each a probe of the newest entries, or a whole reading). */
  reads: number;
  /** The whole reading's own time (every page), ms. */
  fullReadMs: number;
}

const PROBE_EVERY_MS = 50;

/**
 * Waits, at most `boundMs`, for the trail to hold an entry of every answered call; answers the accounting of the last
 * reading. A session's outbox ships its entries oldest first and deletes none before the team's index took them, so
 * once the newest entry of every host (`lastOfEachHost`: its last answered call and when it was sent, wall clock) is
 * in the trail, that host's older ones are too: until then only the newest second is read (one page), then every page.
 */
export async function waitForTrail(opts: {
  reader: TrailReader;
  /** Wall-clock ms before the first call: the reading starts here. */
  since: number;
  answered: ReadonlySet<string>;
  lastOfEachHost: ReadonlyArray<{ traceparent: string; sentAt: number }>;
  /** performance.now() of the last answer. */
  lastAnswer: number;
  boundMs: number;
}): Promise<TrailWait> {
  const deadline = opts.lastAnswer + opts.boundMs;
  const probeSince = Math.max(opts.since, Math.min(...opts.lastOfEachHost.map((l) => l.sentAt)) - 1000);
  let reads = 0;
  let heldAt = performance.now();
  while (opts.lastOfEachHost.length > 0) {
    const probe = await readTrail(opts.reader, probeSince);
    heldAt = performance.now();
    reads++;
    const held = new Set(probe.map((e) => e.traceparent));
    if (opts.lastOfEachHost.every((l) => held.has(l.traceparent)) || heldAt > deadline) break;
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  for (let first = true; ; first = false) {
    const started = performance.now();
    const accounting = account(opts.answered, await readTrail(opts.reader, opts.since));
    const done = performance.now();
    reads++;
    // Complete at the first whole reading: everything was there already when the probe saw the newest entries.
    const heldAll = first ? heldAt : done;
    if (accounting.missing === 0) return { accounting, drainMs: heldAll - opts.lastAnswer, reads, fullReadMs: done - started };
    if (done > deadline) return { accounting, drainMs: Number.NaN, reads, fullReadMs: done - started };
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
}
