// How a reading moved over the run: its start, peak and end, and its least-squares slope over the middle and the
// last third (it "levels off" when the last third grows at most a given floor per minute).

export interface Trend {
  start: number;
  peak: number;
  end: number;
  afterIdle: number | undefined;
  middleThirdSlopePerMin: number;
  lastThirdSlopePerMin: number;
  levelsOff: boolean;
}

/** Least-squares slope of value per minute. */
function slopePerMinute(points: Array<{ t: number; v: number }>): number {
  if (points.length < 2) return Number.NaN;
  const n = points.length;
  const mt = points.reduce((a, p) => a + p.t, 0) / n;
  const mv = points.reduce((a, p) => a + p.v, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mt) * (p.v - mv);
    den += (p.t - mt) ** 2;
  }
  return den === 0 ? Number.NaN : (num / den) * 60;
}

/** Levels off when the last third of the run grows at most `floor` per minute. */
export function trend<T extends { t: number }>(samples: T[], value: (s: T) => number, runS: number, floor: number, afterIdle: number | undefined): Trend {
  const pts = (from: number, to: number) => samples.filter((s) => s.t >= from && s.t <= to).map((s) => ({ t: s.t, v: value(s) }));
  const middle = pts(runS / 3, (2 * runS) / 3);
  const last = pts((2 * runS) / 3, runS);
  const midSlope = slopePerMinute(middle);
  const lastSlope = slopePerMinute(last);
  // The readings taken just after the run (within a few seconds) still count as its end.
  const inRun = samples.filter((s) => s.t <= runS + 5);
  return {
    start: value(samples[0]!),
    peak: Math.max(...samples.map(value)),
    end: value(inRun.at(-1) ?? samples.at(-1)!),
    afterIdle,
    middleThirdSlopePerMin: midSlope,
    lastThirdSlopePerMin: lastSlope,
    levelsOff: lastSlope <= floor,
  };
}
