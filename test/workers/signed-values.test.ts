// The signed values on the shared handle encoding (src/auth/signed.ts) whose modules need workerd (the router's types,
// the OAuth library): session ids, toolset handles, the member cookie, the consent page's handle and the flow cookie.
// Each minted anew in the shared encoding; each of the form before still accepted until it expires; each altered
// refused as before. (The encoding itself, connect handles and flow states: test/unit/signed-handles.test.ts.)
import { env } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { tokenId } from "../../src/auth/token.ts";
import { clearFlowCookie, flowCookie, fromFlowBrowser, memberCookie, memberOf } from "../../src/edge/oauth/member-cookie.ts";
import { MAX_CONSENT_HANDLE_CHARS, mintConsentHandle, openConsentHandle } from "../../src/edge/oauth/consent-handle.ts";
import { mintSessionId, sessionIdBelongsTo } from "../../src/edge/mcp/session-id.ts";
import { checkToolsetHandle, handleProblem, mintToolsetHandle } from "../../src/edge/mcp/toolset-handle.ts";
import * as old from "../shared/old-handles.ts";
import { BASE, addToken, replayUrl, seedTeam, text, workerFetch } from "./helpers.ts";

const KEY = "a-session-key-of-the-tests";
const OTHER_KEY = "another-deployment's-key";
const who = { team: "acme", tokenId: "0123456789abcdef" };
const mate = { team: "acme", tokenId: "fedcba9876543210" };
const USER = "acme.AAAAAAAAAAAAAAAAAAAAAA";
const now = Date.UTC(2026, 5, 1);
const DAY = 24 * 3600_000;
const valueOf = (setCookie: string): string => setCookie.split(";")[0]!.slice("__Host-dynmcp-member=".length);
const header = (value: string): string => `other=1; __Host-dynmcp-member=${value}`;

describe("session ids", () => {
  it("are minted in the shared encoding, random first, and belong to their team and token only", async () => {
    const id = await mintSessionId(KEY, who);
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}\.s2\.[A-Za-z0-9_-]{22}$/);
    expect(await sessionIdBelongsTo(KEY, who, id)).toBe(true);
    expect(await sessionIdBelongsTo(KEY, mate, id)).toBe(false);
    expect(await sessionIdBelongsTo(KEY, { ...who, team: "other" }, id)).toBe(false);
    expect(await sessionIdBelongsTo(OTHER_KEY, who, id)).toBe(false);
    expect(await sessionIdBelongsTo(KEY, who, old.alter(id, 0))).toBe(false);
    expect(await sessionIdBelongsTo(KEY, who, old.alter(id, 2))).toBe(false);
  });

  it("of the form before (`<nonce>.<mac>`) still belong to their team and token; altered, they are refused (404)", async () => {
    const before = await old.oldSessionId(KEY, who.team, who.tokenId);
    expect(await sessionIdBelongsTo(KEY, who, before)).toBe(true);
    expect(await sessionIdBelongsTo(KEY, mate, before)).toBe(false);
    expect(await sessionIdBelongsTo(KEY, who, old.alter(before, 0))).toBe(false);
    expect(await sessionIdBelongsTo(KEY, who, old.alter(before, 1))).toBe(false);
  });
});

describe("toolset handles", () => {

  it("are minted in the shared encoding and checked for token, then expiry", async () => {
    const minted = await mintToolsetHandle(KEY, who, 3600, now);
    expect(minted.handle).toMatch(/^[A-Za-z0-9_-]{22}\.ts2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(minted.handle.startsWith(`${minted.nonce}.`)).toBe(true);
    expect(await checkToolsetHandle(KEY, who, minted.handle, now)).toEqual({ ok: true, nonce: minted.nonce, expiresAt: minted.expiresAt });
    expect(await checkToolsetHandle(KEY, mate, minted.handle, now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkToolsetHandle(KEY, who, old.alter(minted.handle, 2), now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkToolsetHandle(KEY, who, minted.handle, now + 3600_000)).toEqual({ ok: false, problem: "expired", expiredAt: minted.expiresAt });
    // Not ours: its expiry is never told.
    expect(await checkToolsetHandle(KEY, mate, minted.handle, now + 3600_000)).toEqual({ ok: false, problem: "foreign" });
  });

  it("of the form before (`ts1.`) still work until they expire; altered, they get the same words", async () => {
    const before = await old.oldToolsetHandle(KEY, who.team, who.tokenId, now + 600_000);
    const check = await checkToolsetHandle(KEY, who, before, now);
    expect(check).toEqual({ ok: true, nonce: before.split(".")[1], expiresAt: new Date(now + 600_000) });
    expect(await checkToolsetHandle(KEY, who, before, now + 600_000)).toMatchObject({ ok: false, problem: "expired" });
    const altered = await checkToolsetHandle(KEY, who, old.alter(before, 1), now);
    expect(altered).toEqual({ ok: false, problem: "foreign" });
    expect(handleProblem("foreign")).toContain("was not issued to this token (or it was altered)");
    expect(await checkToolsetHandle(KEY, mate, before, now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkToolsetHandle(KEY, who, "ts1.nonsense", now)).toEqual({ ok: false, problem: "malformed" });
  });
});

describe("a toolset handle of the form before, over a 2026 connection", () => {
  const connect = async (team: string, token: string) => {
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/t/${team}/mcp`), { fetch: workerFetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const client = new Client({ name: "modern-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(transport);
    return client;
  };
  const useTool = (client: Client, toolset: string) =>
    client.callTool({ name: "use_tool", arguments: { tool_name: "lazy/read_graph", tool_input: {}, toolset } }) as Promise<{ isError?: boolean }>;

  it("reaches the toolset its nonce names; altered, or another token's, it gets the same words as ever", async () => {
    const token = await seedTeam("sv-ts", { mcp: { lazy: { url: replayUrl("ts-lazy"), description: "Knowledge graph memory." } } });
    const client = await connect("sv-ts", token);
    const loaded = await client.callTool({ name: "load_mcp", arguments: { mcp_name: "lazy" } });
    const toolset = (loaded.structuredContent as { toolset: string }).toolset;
    const before = await old.oldToolsetHandle(env.SESSION_KEY!, "sv-ts", tokenId(token)!, Date.now() + 3600_000, toolset.split(".")[0]);
    const called = await useTool(client, before);
    expect(called.isError, text(called)).toBeFalsy();
    expect(text(called)).toContain('"tool":"read_graph"');
    const altered = await useTool(client, old.alter(before, 3));
    expect(altered.isError).toBe(true);
    expect(text(altered)).toContain("not issued to this token (or it was altered)");
    const mate = await connect("sv-ts", await addToken("sv-ts"));
    expect(text(await useTool(mate, before))).toContain("not issued to this token (or it was altered)");
    await Promise.all([client.close(), mate.close()]);
  });
});

describe("the member cookie", () => {
  it("is a handle bound to its team, carrying the member and its expiry (30 days)", async () => {
    const set = await memberCookie(KEY, "acme", USER, now);
    expect(set).toMatch(/^__Host-dynmcp-member=[A-Za-z0-9_-]{22}\.mc2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}; Path=\/; Max-Age=2592000; Secure; HttpOnly; SameSite=Lax$/);
    const value = valueOf(set);
    expect(await memberOf(KEY, header(value), "acme", now)).toBe(USER);
    expect(await memberOf(KEY, header(value), "acme", now + 30 * DAY - 1000)).toBe(USER);
    expect(await memberOf(KEY, header(value), "acme", now + 30 * DAY)).toBeUndefined();
    expect(await memberOf(KEY, header(value), "other", now)).toBeUndefined();
    expect(await memberOf("another key", header(value), "acme", now)).toBeUndefined();
    for (const part of [0, 2, 3]) expect(await memberOf(KEY, header(old.alter(value, part)), "acme", now)).toBeUndefined();
    expect(await memberOf(KEY, undefined, "acme", now)).toBeUndefined();
  });

  it("of the form before (`<user id>.<expiry>.<mac>`) still names its member until it expires; altered, it names nobody", async () => {
    const before = await old.oldMemberCookieValue(KEY, "acme", USER, now + 30 * DAY);
    expect(await memberOf(KEY, header(before), "acme", now)).toBe(USER);
    expect(await memberOf(KEY, header(before), "acme", now + 30 * DAY)).toBeUndefined();
    expect(await memberOf(KEY, header(before), "other", now)).toBeUndefined();
    // Its expiry pushed out, or its MAC or user id changed.
    const later = before.replace(/\.([0-9a-z]+)\.([^.]+)$/, (_m, exp: string, mac: string) => `.${(parseInt(exp, 36) + 1).toString(36)}.${mac}`);
    for (const altered of [later, old.alter(before, 2), old.alter(before, 1, 3)]) {
      expect(await memberOf(KEY, header(altered), "acme", now)).toBeUndefined();
    }
  });
});

describe("the consent page's handle", () => {
  const request = {
    responseType: "code",
    clientId: "client-1",
    redirectUri: "http://127.0.0.1:1/callback",
    scope: ["mcp"],
    state: "s",
    codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    codeChallengeMethod: "S256",
    resource: "https://proxy.example/t/acme/mcp",
  };

  it("carries the request for its team, ten minutes", async () => {
    const { handle, nonce } = await mintConsentHandle(KEY, "acme", request, now);
    expect(handle).toMatch(/^[A-Za-z0-9_-]{22}\.c2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(await openConsentHandle(KEY, "acme", handle, now)).toEqual({ request, nonce });
    expect(await openConsentHandle(KEY, "acme", handle, now + 600_000)).toBeUndefined();
    expect(await openConsentHandle(KEY, "other", handle, now)).toBeUndefined();
    for (const part of [0, 2, 3]) expect(await openConsentHandle(KEY, "acme", old.alter(handle, part), now)).toBeUndefined();
    expect(await openConsentHandle(KEY, "acme", `${handle}${"A".repeat(MAX_CONSENT_HANDLE_CHARS)}`, now)).toBeUndefined();
  });

  it("of the form before (`c1.`) is still honoured until it expires; altered, it is refused as before", async () => {
    const before = await old.oldConsentHandle(KEY, "acme", request, now + 600_000);
    expect(await openConsentHandle(KEY, "acme", before.handle, now)).toEqual({ request, nonce: before.nonce });
    expect(await openConsentHandle(KEY, "acme", before.handle, now + 600_000)).toBeUndefined();
    expect(await openConsentHandle(KEY, "other", before.handle, now)).toBeUndefined();
    for (const part of [1, 3, 4]) expect(await openConsentHandle(KEY, "acme", old.alter(before.handle, part), now)).toBeUndefined();
  });
});

describe("the flow cookie", () => {
  it("binds a flow to its browser as before: a cookie set before still matches its flow", async () => {
    const state = "m.some-state-of-a-flow";
    const set = await flowCookie(KEY, state);
    const cookie = set.split(";")[0]!;
    expect(cookie).toBe(await old.oldFlowCookie(KEY, state));
    expect(await fromFlowBrowser(KEY, cookie, state)).toBe(true);
    expect(await fromFlowBrowser(KEY, cookie, "m.another-flow")).toBe(false);
    expect(await fromFlowBrowser(KEY, old.alter(cookie, 0, cookie.length - 1), state)).toBe(false);
    expect((await clearFlowCookie(KEY, state)).startsWith(`${cookie.split("=")[0]}=; `)).toBe(true);
    // A state from the query string, whatever it holds, is only ever not this browser's.
    expect(await fromFlowBrowser(KEY, cookie, "m.\nflow-binding/v1")).toBe(false);
  });
});
