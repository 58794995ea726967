// The audit writer under a burst: 500 entries a second offered to a session object's outbox (AUDIT_LOAD_SECONDS, 3 in
// the suite; 60 for the figure in BENCHMARKS.md), each recorded as a call's end records it (the put its answer waits
// for, timed), shipped to the real team index beside them; then every entry is counted in the team's trail, once.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect, it, vi } from "vitest";
import type { SessionObject } from "../../src/session/object.ts";
import { auditId, type AuditEntry } from "../../src/views/audit-entry.ts";

const RATE = 500;
const TICK_MS = 10;
const seconds = Number(env.AUDIT_LOAD_SECONDS) || 3;

const entryAt = (now: number, n: number): AuditEntry => ({
  id: auditId(now),
  at: new Date(now).toISOString(),
  kind: "tool_call",
  principal: { kind: "token", id: "0123456789abcdef" },
  view: "meta",
  era: "2025",
  tool: `load/tool_${n % 50}`,
  outcome: "ok",
  ms: 1,
  request_bytes: 20,
  answer_bytes: 200,
});

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

it(`takes ${RATE} entries a second for ${seconds} s without slowing the answers or losing an entry`, { timeout: (seconds + 60) * 1000 }, async () => {
  const team = `al-${seconds}`;
  const total = RATE * seconds;
  const stub = env.SESSIONS.getByName(`${team}/load`);
  // Each entry's `audit` log line is written (and counted) as usual, just not printed.
  let lines = 0;
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void (String(line).includes('"event":"audit"') && lines++));
  const waits = await runInDurableObject(stub, async (object: SessionObject) => {
    const timings: number[] = [];
    const start = Date.now();
    const perTick = (RATE * TICK_MS) / 1000;
    for (let tick = 0; tick * perTick < total; tick++) {
      // Paced by the clock: each tick's entries are offered at their due time, however long the ones before took.
      const due = start + tick * TICK_MS;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      await Promise.all(
        Array.from({ length: perTick }, async (_, i) => {
          const began = performance.now();
          await object.audit.record(team, 30, entryAt(Date.now(), tick * perTick + i));
          timings.push(performance.now() - began);
        }),
      );
    }
    return { timings, offeredMs: Date.now() - start };
  });
  // Every entry reaches the trail: the outbox empties, and the team's table holds each once.
  const index = env.TEAM_INDEX.getByName(team);
  const count = () => runInDurableObject(index, (_o, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM audit_entries").one().n);
  const waiting = () => runInDurableObject(stub, async (_o, state) => (await state.storage.list({ prefix: "audit:" })).size);
  const drainStart = Date.now();
  let stored = 0;
  for (let i = 0; i < 600 && ((stored = await count()) < total || (await waiting()) > 0); i++) await new Promise((r) => setTimeout(r, 100));
  const sorted = [...waits.timings].sort((a, b) => a - b);
  const figure = {
    rate: RATE,
    seconds,
    offered: total,
    offeredMs: waits.offeredMs,
    stored,
    waiting: await waiting(),
    drainMs: Date.now() - drainStart,
    putP50Ms: percentile(sorted, 50),
    putP99Ms: percentile(sorted, 99),
    putMaxMs: sorted.at(-1) ?? 0,
  };
  vi.restoreAllMocks();
  console.info(`audit load: ${JSON.stringify({ ...figure, logLines: lines })}`);
  expect(lines).toBe(total);
  expect(figure.stored).toBe(total);
  expect(figure.waiting).toBe(0);
  expect(figure.putP50Ms).toBeLessThanOrEqual(1);
});
