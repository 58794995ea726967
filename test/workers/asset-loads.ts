// What every asset loader of the Worker shares (src/lib/load-once.ts), checked through the real ASSETS binding:
// concurrent loads share one fetch, a failed one is tried again at the next load, then the loaded value is kept.
import { env } from "cloudflare:workers";
import { expect } from "vitest";

/** Runs a loader through a counted ASSETS binding that fails first; the value it loaded, once. */
export async function expectLoadedOnce<T>(load: (assets: { fetch(url: string): Promise<Response> }) => Promise<T>, missing: RegExp): Promise<T> {
  let fetches = 0;
  let fail = true;
  const counted = {
    fetch: (url: string) => {
      fetches++;
      return fail ? Promise.resolve(new Response("gone", { status: 404 })) : env.ASSETS.fetch(url);
    },
  };
  const failed = await Promise.allSettled([load(counted), load(counted), load(counted)]);
  expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
  expect(String((failed[0] as PromiseRejectedResult).reason)).toMatch(missing);
  expect(fetches).toBe(1);
  fail = false;
  const loaded = await Promise.all(Array.from({ length: 8 }, () => load(counted)));
  expect(fetches).toBe(2);
  expect(new Set(loaded).size).toBe(1);
  await load(counted);
  expect(fetches).toBe(2);
  return loaded[0]!;
}
