// A small deterministic generator (mulberry32) for the fuzz tests, so a failure can be replayed from its seed. Shared
// by the workerd and the Node test projects (plain TypeScript, no runtime imports).

export interface SeededRandom {
  /** A number in [0, 1). */
  next: () => number;
  pick: <T>(items: readonly T[]) => T;
  /** An integer in [0, n). */
  int: (n: number) => number;
}

export function seededRandom(seed: number): SeededRandom {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick, int: (n: number) => Math.floor(next() * n) };
}
