// What an upstream's messages are cleaned of, and how: every form of a withheld value (as is, JSON-escaped,
// percent-encoded, base64 at any alignment), in string values and object keys, at any depth; what is too short to
// withhold; OAuth tokens learned on the way; which header values are withheld at all (resolveHeaders).
import { describe, expect, it } from "vitest";
import type { Transport } from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { resolveHeaders } from "../../src/upstream/headers.ts";
import { MIN_WITHHELD, WITHHELD, Withheld, cleanInbound, errorSecrets } from "../../src/upstream/withheld.ts";

const SECRET = 'sk-"odd"+value/0123456789 ü';
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const b64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

describe("a value withheld from text", () => {
  const withheld = new Withheld([SECRET]);

  it("in every form an upstream may write it: as is, JSON-escaped, percent-encoded", () => {
    expect(withheld.text(`key ${SECRET}!`)).toBe(`key ${WITHHELD}!`);
    expect(withheld.text(JSON.stringify({ key: SECRET }))).toBe(`{"key":"${WITHHELD}"}`);
    expect(withheld.text(`https://x.example/?key=${encodeURIComponent(SECRET)}&b=1`)).toBe(`https://x.example/?key=${WITHHELD}&b=1`);
  });

  it("in base64 and base64url wherever it starts, leaving valid base64 that no longer decodes to it", () => {
    for (const prefix of ["", "a", "ab", "abc", "header: "]) {
      for (const encode of [b64, b64url]) {
        const blob = encode(`${prefix}${SECRET} and more`);
        const cleaned = withheld.text(blob);
        expect(cleaned).not.toBe(blob);
        expect(cleaned).toHaveLength(blob.length);
        expect(cleaned).toMatch(/WITHHELD/);
        const decoded = Buffer.from(cleaned, encode === b64 ? "base64" : "base64url").toString("utf8");
        expect(decoded).not.toContain(SECRET);
        expect(decoded).toContain("and more");
      }
    }
  });

  it("leaves other text alone", () => {
    const text = `nothing here but ${b64("ordinary words")} and ${SECRET.slice(0, 6)}`;
    expect(withheld.text(text)).toBe(text);
  });

  it("withholds the long words of a value too (a token echoed without its scheme), never a short one", () => {
    const bearer = new Withheld(["Bearer tok-0123456789", "short7!", "Basic x"]);
    expect(bearer.text("got tok-0123456789 and Bearer tok-0123456789")).toBe(`got ${WITHHELD} and ${WITHHELD}`);
    expect(bearer.text("short7! Bearer Basic x")).toBe("short7! Bearer Basic x");
    expect("short7!".length).toBeLessThan(MIN_WITHHELD);
  });

  it("learns OAuth tokens on the way, keeping the newest two", () => {
    const tokens = new Withheld([]);
    for (const token of ["token-one-111", "token-two-222", "token-three-333"]) tokens.learn(token);
    tokens.learn("short");
    expect(tokens.text("token-one-111 token-two-222 token-three-333 short")).toBe(`token-one-111 ${WITHHELD} ${WITHHELD} short`);
    expect(tokens.needles).toContain("token-three-333");
  });
});

describe("a message cleaned", () => {
  it("in every string, object keys included, in place and in order, however deep", () => {
    const withheld = new Withheld([SECRET]);
    let deep: unknown = { leaf: `deep ${SECRET}` };
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const message = {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: SECRET }], structuredContent: { first: 1, [SECRET]: "name", n: 5, ok: true, none: null }, deep },
    };
    expect(withheld.message(message)).toBe(message);
    expect(message.result.content[0]!.text).toBe(WITHHELD);
    expect(Object.entries(message.result.structuredContent)).toEqual([["first", 1], [WITHHELD, "name"], ["n", 5], ["ok", true], ["none", null]]);
    let node = message.result.deep;
    while (Array.isArray(node)) node = node[0];
    expect(node).toEqual({ leaf: `deep ${WITHHELD}` });
  });

  it("keeps a key named __proto__ a plain entry when it renames the keys beside it", () => {
    const withheld = new Withheld([SECRET]);
    const message = JSON.parse(`{"__proto__": "x", ${JSON.stringify(SECRET)}: 1}`) as Record<string, unknown>;
    withheld.message(message);
    expect(Object.keys(message)).toEqual(["__proto__", WITHHELD]);
    expect(Object.getPrototypeOf(message)).toBe(Object.prototype);
  });

  it("costs nothing with nothing to withhold", () => {
    const message = { text: SECRET };
    expect(new Withheld([]).message(message)).toEqual({ text: SECRET });
  });
});

describe("a transport's messages", () => {
  it("pass the cleaning once, whoever installs the handler and however handlers are chained", () => {
    const transport: { onmessage?: ((m: unknown) => void) | undefined } = {};
    let cleanings = 0;
    cleanInbound(transport as Transport, (message) => {
      cleanings++;
      (message as { cleaned?: boolean }).cleaned = true;
    });
    const got: unknown[] = [];
    // The SDK's way: keep what was there, install a handler that calls it first.
    transport.onmessage = (m) => void got.push(["first", m]);
    const before = transport.onmessage;
    transport.onmessage = (m) => {
      before?.(m);
      got.push(["second", m]);
    };
    transport.onmessage!({ jsonrpc: "2.0", method: "x" });
    expect(cleanings).toBe(1);
    expect(got).toEqual([
      ["first", { jsonrpc: "2.0", method: "x", cleaned: true }],
      ["second", { jsonrpc: "2.0", method: "x", cleaned: true }],
    ]);
  });
});

describe("what of an upstream's headers is withheld", () => {
  const spec = (headers: Record<string, string>) => ({ name: "up", headers }) as UpstreamSpec;
  const lookup = async (name: string) => ({ KEY: "secret-value-123", SHORT: "abc" })[name];

  it("every secret's value, and the literal text of a header that looks like a credential; not other literal text", async () => {
    const resolved = await resolveHeaders(
      spec({
        "X-Api-Key": "${secret:KEY}",
        Authorization: "Bearer ${secret:SHORT}",
        "X-Literal-Token": "lit-credential-0123456789",
        "X-Other": "ghp_0123456789abcdef",
        "X-Region": "eu-west-1",
      }),
      lookup,
    );
    expect(resolved.headers).toEqual({
      "X-Api-Key": "secret-value-123",
      Authorization: "Bearer abc",
      "X-Literal-Token": "lit-credential-0123456789",
      "X-Other": "ghp_0123456789abcdef",
      "X-Region": "eu-west-1",
    });
    expect(resolved.withheld).toEqual(["secret-value-123", "abc", "lit-credential-0123456789", "ghp_0123456789abcdef"]);
  });

  it("error text keeps scrubbing every header value of 4 characters or more, and long words", () => {
    expect(errorSecrets({ a: "abc", b: "abcd", c: "Bearer tok-0123456789" })).toEqual(["abcd", "Bearer tok-0123456789", "tok-0123456789"]);
  });
});
