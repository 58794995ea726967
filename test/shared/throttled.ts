// What a per-address limit's refusal looks like, in the workers pool and under `wrangler dev` alike: 429, and a
// Retry-After of whole seconds within the limit's minute.
import { expect } from "vitest";

export function expectThrottled(res: Response): void {
  expect(res.status).toBe(429);
  const wait = Number(res.headers.get("retry-after"));
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(60);
}
