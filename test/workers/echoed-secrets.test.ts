// A member may use a tool, never learn the key behind it: a team's upstreams tell back the headers they were sent
// (harness/echo-upstream.ts, one of each era, both eager, and a lazy one), with the team's secrets in them. A member
// takes every view as a 2025 host and as a 2026 host (test/shared/echo-tour.ts); no answer, error, relayed request
// or notification, no log line, no KV value and no Durable Object's storage holds a secret, or a literal header
// value that looks like a credential, in any form the upstream wrote it. What the upstream echoed stands as
// `[withheld]` in its place, and what is no credential (a region) still reads as it was.
import { env } from "cloudflare:workers";
import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { ECHO_SECRETS, echoConfig, leaksIn, missingEchoes, legacyTour, modernTour } from "../shared/echo-tour.ts";
import { BASE, adminFetch, workerFetch } from "./helpers.ts";

const TEAM = "echoed";
let token: string;
const url = (query: string) => `${BASE}/t/${TEAM}/mcp${query}`;
const fetchWorker = (input: string | URL, init?: RequestInit) => workerFetch(input, init);

beforeAll(async () => {
  for (const [name, value] of Object.entries(ECHO_SECRETS)) expect((await adminFetch("PUT", `/teams/${TEAM}/secrets/${name}`, { value })).status).toBe(204);
  expect((await adminFetch("PUT", `/teams/${TEAM}/config`, echoConfig(env.ECHO_MODERN_URL, env.ECHO_LEGACY_URL))).status).toBe(200);
  token = ((await (await adminFetch("POST", `/teams/${TEAM}/tokens`, {})).json()) as { token: string }).token;
});

const logged: string[] = [];
beforeEach(() => {
  logged.length = 0;
  for (const method of ["log", "error", "warn", "info", "debug"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(" ")));
  }
});
afterEach(() => vi.restoreAllMocks());

/** Every KV value, and the storage of every session and team index object, as text. */
async function everythingStored(): Promise<string[]> {
  const stored: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.TEAMS.list(cursor ? { cursor } : {});
    for (const { name } of page.keys) stored.push(`${name} ${await env.TEAMS.get(name)}`);
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  const objects = async <T extends Rpc.DurableObjectBranded | undefined>(namespace: DurableObjectNamespace<T>) => {
    for (const id of await listDurableObjectIds(namespace)) {
      stored.push(await runInDurableObject(namespace.get(id), async (_instance, state) => JSON.stringify([...(await state.storage.list())])));
    }
  };
  await objects(env.SESSIONS);
  await objects(env.TEAM_INDEX);
  return stored;
}

/** The tour's texts show what the upstreams echoed, withheld; nothing anywhere holds a secret. */
async function expectWithheld(texts: string[]): Promise<void> {
  const all = texts.join("\n");
  // The upstreams did echo: their text is there, the secrets replaced, the region (no credential) kept.
  expect(missingEchoes(all)).toEqual([]);
  expect(leaksIn(all)).toEqual([]);
  expect(leaksIn(logged.join("\n"))).toEqual([]);
  const stored = await everythingStored();
  expect(stored.some((s) => s.includes("[withheld]"))).toBe(true);
  // The literal credential is in the team's config as written (KV, the session records): the secrets are not.
  expect(leaksIn(stored.join("\n"), Object.values(ECHO_SECRETS))).toEqual([]);
}

describe("an upstream that echoes the team's secrets", () => {
  for (const view of ["meta", "direct", "code"] as const) {
    it(`2025 host, ${view} view: no answer, log line or storage holds a secret`, async () => {
      await expectWithheld(await legacyTour(url, token, fetchWorker, view));
    });
  }
  for (const view of ["meta", "code"] as const) {
    it(`2026-07-28 host, ${view} view: no answer, log line or storage holds a secret`, async () => {
      await expectWithheld(await modernTour(url, token, fetchWorker, view));
    });
  }
});
