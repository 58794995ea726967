// The proxy's signed values: one MAC and one handle encoding for every value it hands out and later believes without
// a lookup (session ids, toolset handles, connect links, the member cookie, flow states, consent pages).
//
// The MAC is the first 128 bits of HMAC-SHA256 under SESSION_KEY over a text of lines: the first names what is signed
// and its version, so one kind of value can never stand in for another. (Session ids of the form before signed a
// team name first: no name of a signed kind is a team name, they all hold a `/`.)
//
// A handle is `<nonce>.<tag>[.<payload>].<mac>`:
//   nonce    128 random bits, base64url (22 characters): first, so a handle's leading characters tell handles apart
//            (log lines name a session by them, objects are named by them)
//   tag      the format and its version (`ts2`, `cx2`…), each registered once (`handleFormat`)
//   payload  what the handle carries, base64url JSON read by the format's zod schema; absent in a format that carries
//            nothing but its nonce
//   mac      the MAC over `handle/v2`, the values the handle is bound to without carrying them (a team, a token id, a
//            server: the checker knows them), and the handle up to its last dot
// The payload is read only after the MAC matched. Pure apart from Web Crypto.
import type * as z from "zod";
import { base64url, fromBase64url } from "../lib/bytes.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** HMAC keys by secret: a deployment has one SESSION_KEY (two while it rotates). */
const keys = new BoundedCache<string, Promise<CryptoKey>>({ max: 4 });

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

/**
 * The proxy's one MAC: the first 128 bits of HMAC-SHA256(secret, the lines joined by line breaks), base64url (22
 * characters). The first line names what is signed (none of those names can be a team name), so the texts of two
 * kinds never coincide whatever a later line holds.
 */
export async function macOf(secret: string, ...lines: string[]): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(lines.join("\n")));
  return base64url(new Uint8Array(mac, 0, 16));
}

/** True when `mac` is the MAC of the lines, compared in constant time. */
export async function macMatches(secret: string, mac: string, ...lines: string[]): Promise<boolean> {
  return constantTimeEqual(mac, await macOf(secret, ...lines));
}

/**
 * Equal-length strings compared without an early exit: every byte is looked at whatever the first difference (the
 * same in workerd and in Node, which share this file). A length difference is not a secret: tokens and MACs have
 * fixed lengths.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  if (x.byteLength !== y.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < x.byteLength; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

/** 128 random bits, base64url (22 characters). */
export const nonce128 = (): string => base64url(crypto.getRandomValues(new Uint8Array(16)));

/** A signed format: its tag on the wire and the schema of what it carries (`z.undefined()`: nothing but the nonce). */
export interface HandleFormat<T> {
  readonly tag: string;
  readonly payload: z.ZodType<T>;
}

const TAG = /^[a-z]{1,8}[0-9]{1,3}$/;
const registered = new Set<string>();

/** Declares a format; a tag names one format only (a second declaration of it is a programming error). */
export function handleFormat<T>(tag: string, payload: z.ZodType<T>): HandleFormat<T> {
  if (!TAG.test(tag)) throw new Error(`a handle tag is lower-case letters then a version number, not ${JSON.stringify(tag)}`);
  if (registered.has(tag)) throw new Error(`the handle tag ${tag} is declared twice`);
  registered.add(tag);
  return { tag, payload };
}

/** The longest handle any format reads (a consent page's, which carries an authorization request, is the largest). */
const MAX_HANDLE_CHARS = 4_096;
const HANDLE = /^([A-Za-z0-9_-]{22})\.([a-z]{1,8}[0-9]{1,3})(?:\.([A-Za-z0-9_-]+))?\.([A-Za-z0-9_-]{22})$/;
const SIGNED = "handle/v2";

/** A handle's parts, when it has this format's shape (nothing checked yet). */
function partsOf(format: HandleFormat<unknown>, handle: string) {
  if (handle.length > MAX_HANDLE_CHARS) return undefined;
  const m = HANDLE.exec(handle);
  if (!m || m[2] !== format.tag) return undefined;
  const [, nonce = "", , body, mac = ""] = m;
  return { nonce, body, mac, unsigned: handle.slice(0, handle.length - mac.length - 1) };
}

/** A new handle of `format` carrying `payload`, bound to the `bound` values. */
export async function sealHandle<T>(secret: string, format: HandleFormat<T>, bound: readonly string[], payload: T): Promise<{ handle: string; nonce: string }> {
  const nonce = nonce128();
  const body = payload === undefined ? "" : `.${base64url(encoder.encode(JSON.stringify(payload)))}`;
  const unsigned = `${nonce}.${format.tag}${body}`;
  return { handle: `${unsigned}.${await macOf(secret, SIGNED, ...bound, unsigned)}`, nonce };
}

/** Why a handle was not opened: not of the format's shape (or its payload is not), or not signed for these values. */
export type OpenProblem = "malformed" | "foreign";
export type OpenedHandle<T> = { ok: true; nonce: string; payload: T } | { ok: false; problem: OpenProblem };

/** The handle's nonce and payload when it is of `format`, signed by `secret` for the `bound` values. */
export async function openHandle<T>(secret: string, format: HandleFormat<T>, bound: readonly string[], handle: string): Promise<OpenedHandle<T>> {
  const parts = partsOf(format, handle);
  if (!parts) return { ok: false, problem: "malformed" };
  if (!(await macMatches(secret, parts.mac, SIGNED, ...bound, parts.unsigned))) return { ok: false, problem: "foreign" };
  const payload = readPayload(format, parts.body);
  return payload.ok ? { ok: true, nonce: parts.nonce, payload: payload.value } : { ok: false, problem: "malformed" };
}

/** True when `handle` has the shape of a handle of `format` (nothing checked). */
export const hasHandleShape = (format: HandleFormat<unknown>, handle: string): boolean => partsOf(format, handle) !== undefined;

function readPayload<T>(format: HandleFormat<T>, body: string | undefined): { ok: true; value: T } | { ok: false } {
  let json: unknown;
  try {
    json = body === undefined ? undefined : JSON.parse(decoder.decode(fromBase64url(body)));
  } catch {
    return { ok: false };
  }
  const parsed = format.payload.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false };
}

/**
 * A value of a format the proxy signed before this encoding (src/auth/legacy-handles.ts), opened into the format's
 * payload: `mac` checked over the old signed lines, then the payload read (only then) by the format's schema.
 */
export async function openLegacy<T>(secret: string, format: HandleFormat<T>, old: { nonce: string; lines: string[]; mac: string; payload: () => unknown }): Promise<OpenedHandle<T>> {
  if (!(await macMatches(secret, old.mac, ...old.lines))) return { ok: false, problem: "foreign" };
  const parsed = format.payload.safeParse(old.payload());
  return parsed.success ? { ok: true, nonce: old.nonce, payload: parsed.data } : { ok: false, problem: "malformed" };
}

/** A handle's `exp` (unix seconds) as a date, and whether it has passed at `now`. */
export function expiry(exp: number, now: number): { at: Date; passed: boolean } {
  return { at: new Date(exp * 1000), passed: exp * 1000 <= now };
}
