// The one handle encoding (src/auth/signed.ts) and the formats built on it in src/auth: connect handles and flow
// states. For each, a value of the form before still works until it expires, and an altered one (either form) is
// refused with the answer it got before. (Session ids, toolset handles, the member cookie and the consent page's
// handle, whose modules need workerd's types: test/workers/signed-values.test.ts.)
import * as z from "zod";
import { describe, expect, it } from "vitest";
import { handleFormat, hasHandleShape, macOf, openHandle, sealHandle } from "../../src/auth/signed.ts";
import { CONNECT_LINK_TTL_MS, checkConnectHandle, checkConnectHandleOfAnyAccount, mintConnectHandle } from "../../src/auth/connect-link.ts";
import { flowStatePrefix, isFlowState, mintFlowState } from "../../src/auth/flow-state.ts";
import * as old from "../shared/old-handles.ts";

const KEY = "a-session-key-of-the-tests";
const OTHER_KEY = "another-deployment's-key";

describe("the handle encoding", () => {
  const NOTE = handleFormat("note9", z.strictObject({ text: z.string(), n: z.int() }));

  it("carries a typed payload, bound to values it does not carry, behind a nonce that comes first", async () => {
    const { handle, nonce } = await sealHandle(KEY, NOTE, ["acme", "x"], { text: "hi", n: 3 });
    expect(handle).toMatch(/^[A-Za-z0-9_-]{22}\.note9\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(handle.startsWith(`${nonce}.`)).toBe(true);
    expect(await openHandle(KEY, NOTE, ["acme", "x"], handle)).toEqual({ ok: true, nonce, payload: { text: "hi", n: 3 } });
    expect(hasHandleShape(NOTE, handle)).toBe(true);
  });

  it("refuses another key, other bound values, and any part altered", async () => {
    const { handle } = await sealHandle(KEY, NOTE, ["acme", "x"], { text: "hi", n: 3 });
    const foreign = { ok: false, problem: "foreign" };
    expect(await openHandle(OTHER_KEY, NOTE, ["acme", "x"], handle)).toEqual(foreign);
    expect(await openHandle(KEY, NOTE, ["acme", "y"], handle)).toEqual(foreign);
    expect(await openHandle(KEY, NOTE, ["acme"], handle)).toEqual(foreign);
    for (const part of [0, 2, 3]) expect(await openHandle(KEY, NOTE, ["acme", "x"], old.alter(handle, part))).toEqual(foreign);
    // The tag is the format's: a handle of another format (or version) is not this one's shape.
    expect(await openHandle(KEY, NOTE, ["acme", "x"], handle.replace(".note9.", ".note8."))).toEqual({ ok: false, problem: "malformed" });
    for (const bad of ["", "x", `${handle}.`, handle.replace(/\.[^.]+$/, ""), "a".repeat(5_000)]) {
      expect(await openHandle(KEY, NOTE, ["acme", "x"], bad)).toEqual({ ok: false, problem: "malformed" });
    }
  });

  it("reads the payload by the format's schema only after the MAC matched", async () => {
    const LOOSE = handleFormat("loose1", z.unknown());
    const { handle } = await sealHandle(KEY, LOOSE, [], { text: 5 });
    // Signed by the proxy, but not a NOTE's payload: malformed, never a payload of the wrong shape.
    const asNote = handle.replace(".loose1.", ".note9.");
    const resigned = `${asNote.slice(0, asNote.lastIndexOf("."))}.${await macOf(KEY, "handle/v2", asNote.slice(0, asNote.lastIndexOf(".")))}`;
    expect(await openHandle(KEY, NOTE, [], resigned)).toEqual({ ok: false, problem: "malformed" });
  });

  it("declares a tag once, of letters then a version", () => {
    expect(() => handleFormat("note9", z.unknown())).toThrow(/declared twice/);
    expect(() => handleFormat("Note1", z.unknown())).toThrow(/lower-case letters then a version/);
    expect(() => handleFormat("note", z.unknown())).toThrow(/lower-case letters then a version/);
  });
});

describe("connect handles", () => {
  const now = Date.UTC(2026, 5, 1);
  const user = "acme.AAAAAAAAAAAAAAAAAAAAAA";

  it("are minted in the shared encoding and name their account only by a tag", async () => {
    const { handle, expiresAt } = await mintConnectHandle(KEY, "acme", "github", user, now);
    expect(handle).toMatch(/^[A-Za-z0-9_-]{22}\.cx2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(atob(handle.split(".")[2]!.replace(/-/g, "+").replace(/_/g, "/"))).not.toContain(user);
    expect(await checkConnectHandle(KEY, handle, "acme", "github", user, now)).toMatchObject({ ok: true, expiresAt });
    expect(await checkConnectHandle(KEY, handle, "acme", "github", "shared", now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkConnectHandle(KEY, handle, "acme", "gitlab", user, now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkConnectHandle(KEY, handle, "acme", "github", user, now + CONNECT_LINK_TTL_MS)).toEqual({ ok: false, problem: "expired" });
    expect(await checkConnectHandle(KEY, old.alter(handle, 2), "acme", "github", user, now)).toEqual({ ok: false, problem: "foreign" });
  });

  it("of the form before (`cx1.`) still work until they expire; altered, they are refused as before", async () => {
    const before = await old.oldConnectHandle(KEY, "acme", "github", user, now + CONNECT_LINK_TTL_MS);
    expect(await checkConnectHandle(KEY, before, "acme", "github", user, now)).toMatchObject({ ok: true, nonce: before.split(".")[1] });
    const tag = (await checkConnectHandleOfAnyAccount(KEY, before, "acme", "github", now)) as { ok: true; accountTag: string };
    const { handle: fresh } = await mintConnectHandle(KEY, "acme", "github", user, now);
    // The same account's tag in both forms: links of one account are told apart from others' alike.
    expect(await checkConnectHandleOfAnyAccount(KEY, fresh, "acme", "github", now)).toEqual({ ok: true, accountTag: tag.accountTag });
    expect(await checkConnectHandle(KEY, before, "acme", "github", user, now + CONNECT_LINK_TTL_MS)).toEqual({ ok: false, problem: "expired" });
    expect(await checkConnectHandle(KEY, before, "acme", "github", "shared", now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkConnectHandle(KEY, old.alter(before, 4), "acme", "github", user, now)).toEqual({ ok: false, problem: "foreign" });
    expect(await checkConnectHandle(KEY, "cx1.abc", "acme", "github", user, now)).toEqual({ ok: false, problem: "malformed" });
  });
});

describe("flow states", () => {
  it("are `<prefix>.<handle>`: the prefix read before anything is checked, the whole bound to the kind and team", async () => {
    const state = await mintFlowState(KEY, "connect", "acme", "acme");
    expect(state).toMatch(/^acme\.[A-Za-z0-9_-]{22}\.fs2\.[A-Za-z0-9_-]{22}$/);
    expect(flowStatePrefix(state)).toBe("acme");
    expect(await isFlowState(KEY, "connect", "acme", state)).toBe(true);
    expect(await isFlowState(KEY, "member-sign-in", "acme", state)).toBe(false);
    expect(await isFlowState(KEY, "connect", "other", state)).toBe(false);
    // The prefix is signed too: the same handle under another prefix is not a state of the proxy's.
    expect(await isFlowState(KEY, "connect", "acme", state.replace(/^acme\./, "other."))).toBe(false);
    expect(await isFlowState(KEY, "connect", "acme", old.alter(state, 1))).toBe(false);
    const member = await mintFlowState(KEY, "member-sign-in", "acme", "m");
    expect(flowStatePrefix(member)).toBe("m");
    // The OAuth library's own states have no dot; made-up ones have no prefix to read.
    for (const made of ["AbCdEf0123456789", "m.nonsense", "", "acme.x.fs2.y"]) expect(flowStatePrefix(made)).toBeUndefined();
  });

  it("of the form before (`<prefix>.<nonce>.<mac>`) still finish their flow; altered, they are refused as before", async () => {
    const before = await old.oldFlowState(KEY, "member-sign-in", "acme", "m");
    expect(flowStatePrefix(before)).toBe("m");
    expect(await isFlowState(KEY, "member-sign-in", "acme", before)).toBe(true);
    expect(await isFlowState(KEY, "connect", "acme", before)).toBe(false);
    expect(await isFlowState(KEY, "member-sign-in", "acme", old.alter(before, 2))).toBe(false);
  });
});
