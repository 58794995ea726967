// A code-mode run's wall clock (src/views/code/wall-clock.ts) on fake timers: it runs out after the wall time, stands still
// while a call holds it (within the hold budget, shared by every hold of the run), and leaves no timer once stopped.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WallClock } from "../../src/views/code/wall-clock.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Whether the clock has run out, after the microtasks of this turn. */
async function expired(clock: WallClock): Promise<boolean> {
  let out = false;
  void clock.expired.then(() => (out = true));
  await vi.advanceTimersByTimeAsync(0);
  return out;
}

/** A promise the test settles. */
function later() {
  let settle!: () => void;
  const promise = new Promise<void>((resolve) => (settle = resolve));
  return { promise, settle };
}

describe("the run's wall clock", () => {
  it("runs out after the wall time, and not before", async () => {
    const clock = new WallClock(1_000, 500);
    await vi.advanceTimersByTimeAsync(999);
    expect(await expired(clock)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await expired(clock)).toBe(true);
  });

  it("stands still while a call holds it, then runs on for the time that was left", async () => {
    const clock = new WallClock(1_000, 10_000);
    await vi.advanceTimersByTimeAsync(400);
    const asked = later();
    const held = clock.hold(asked.promise);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await expired(clock)).toBe(false);
    asked.settle();
    await held;
    await vi.advanceTimersByTimeAsync(599);
    expect(await expired(clock)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await expired(clock)).toBe(true);
  });

  it("runs again once the hold budget is spent, whether or not the hold has ended; holds at once share one budget", async () => {
    const clock = new WallClock(1_000, 300);
    const first = later();
    const second = later();
    void clock.hold(first.promise);
    void clock.hold(second.promise);
    await vi.advanceTimersByTimeAsync(300 + 999);
    expect(await expired(clock)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await expired(clock)).toBe(true);
  });

  it("leaves no timer behind once stopped", async () => {
    const clock = new WallClock(1_000, 300);
    void clock.hold(later().promise);
    clock.stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await expired(clock)).toBe(false);
  });
});
