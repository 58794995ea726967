// Limits per client address on what anybody may send without a working credential: failed authentications at the
// MCP endpoint and the admin API (one budget), and every request of the OAuth and connect routes (another). Each is
// ADDRESS_LIMIT events in any ADDRESS_WINDOW_MS; past it the address gets 429 with Retry-After, decided before
// anything is read, so a flood costs no KV read and wakes no object (docs/security.md).
//
// Two counts, because neither alone holds everywhere:
// - this isolate's own, exact (the last ADDRESS_LIMIT events of each address, a sliding minute). Under `wrangler dev`
//   and in the test pool every request meets the same isolate, so it is the whole truth there;
// - the ADDRESS_LIMITER binding's (wrangler.toml: the same 100 a minute in both environments, apart from
//   TOKEN_LIMITER, whose local limit is the load benchmark's), shared by the isolates of one Cloudflare location
//   and eventually consistent: it catches a flood that the platform spreads over many isolates.
// Deployed, the bound is therefore exact per isolate and approximate per location; a Durable Object would be exact
// everywhere, but waking one per failed request is what the limit exists to avoid.
import ipaddr from "ipaddr.js";
import type { Env } from "../../lib/env.ts";
import { log } from "../../lib/log.ts";
import { BoundedCache } from "../../lib/bounded-cache.ts";

export const ADDRESS_LIMIT = 100;
export const ADDRESS_WINDOW_MS = 60_000;

/** What an address's events count against: each budget has its own count per address. */
export type AddressBudget = "failed_auth" | "oauth";

/** The key of a request without a usable `CF-Connecting-IP` (only local runs and tests send none): one shared budget. */
export const UNKNOWN_ADDRESS = "unknown";

/**
 * Who a budget is counted for: `CF-Connecting-IP` (set by Cloudflare's edge, and by `wrangler dev` from the
 * client's address unless the client sent one). An IPv6 address counts by its /64, since one customer holds a
 * whole /64 and picks any address in it; an IPv4-mapped one as its IPv4 address.
 */
export function clientAddress(request: Request): string {
  const raw = request.headers.get("cf-connecting-ip")?.trim() ?? "";
  let key = addressKeys.get(raw);
  if (key === undefined) {
    key = addressKey(raw);
    // Only what could be an address is kept (an IPv6 one is at most 45 characters): a header is the sender's to fill.
    if (raw.length <= 64) addressKeys.set(raw, key);
  }
  return key;
}

/** The key of each `CF-Connecting-IP` this isolate has seen: a client sends every request from the same address. */
const addressKeys = new BoundedCache<string, string>({ max: 5_000 });

function addressKey(raw: string): string {
  if (!ipaddr.isValid(raw)) return UNKNOWN_ADDRESS;
  const address = ipaddr.process(raw);
  if (address.kind() === "ipv4") return address.toString();
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(":")}::/64`;
}

interface Counts {
  /** When the address's last events (at most ADDRESS_LIMIT of them) happened, oldest first. */
  times: number[];
  /** Until when the binding said the address is over (an isolate's own count may not know it yet). */
  refusedUntil: number;
}

/** Addresses this isolate keeps counts of; the least recently counted is dropped first (the binding still counts it). */
const counts = new BoundedCache<string, Counts>({ max: 5_000 });

/** Seconds until the address may be counted again (at least 1), or 0 when it is within its budget now. */
function wait(entry: Counts | undefined, now: number): number {
  if (!entry) return 0;
  const full = entry.times.length >= ADDRESS_LIMIT ? entry.times[0]! + ADDRESS_WINDOW_MS : 0;
  const until = Math.max(full, entry.refusedUntil);
  return until > now ? Math.max(1, Math.ceil((until - now) / 1000)) : 0;
}

/** The address's counts, made the most recently counted. */
function touch(key: string): Counts {
  const entry = counts.get(key) ?? { times: [], refusedUntil: 0 };
  counts.set(key, entry);
  return entry;
}

/** The 429's Retry-After in seconds when `address` is over `budget` now, by this isolate's counts alone (no I/O). */
export function overAddressLimit(budget: AddressBudget, address: string, now = Date.now()): number | undefined {
  return wait(counts.get(`${budget}/${address}`), now) || undefined;
}

/**
 * Counts one event of `address` against `budget`, here and at the binding. Answers the Retry-After in seconds when
 * the binding says this very event is over the budget (it counted events of other isolates); an address this
 * isolate alone finds over is refused at its next request by `overAddressLimit`. A failing binding counts nothing
 * (this isolate's count still holds). The address is logged once, when it goes over.
 */
export async function countAddressEvent(env: Pick<Env, "ADDRESS_LIMITER">, budget: AddressBudget, address: string, route: string, now = Date.now()): Promise<number | undefined> {
  const key = `${budget}/${address}`;
  const entry = touch(key);
  const before = wait(entry, now);
  entry.times.push(now);
  if (entry.times.length > ADDRESS_LIMIT) entry.times.shift();
  let within = true;
  try {
    within = env.ADDRESS_LIMITER ? (await env.ADDRESS_LIMITER.limit({ key })).success : true;
  } catch {
    // Availability over strictness: the isolate's own count goes on limiting.
  }
  if (!within) entry.refusedUntil = now + ADDRESS_WINDOW_MS;
  const after = wait(entry, now);
  if (before === 0 && after > 0) log({ event: "throttled", budget, address, route });
  return within ? undefined : after;
}

/** The JSON 429 of the admin API and the OAuth routes (the MCP route answers a JSON-RPC error instead). */
export const addressLimitAnswer = (retryAfter: number, what: string): Response =>
  Response.json(
    { error: "rate_limited", message: `Too many ${what} from this address: retry after the time given in Retry-After.` },
    { status: 429, headers: { "retry-after": String(retryAfter) } },
  );
