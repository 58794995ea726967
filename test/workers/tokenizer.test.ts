// The token counter inside workerd: the table comes through the real static-assets binding (wrangler.toml's
// [assets], read by the pool), and loads are shared. js-tiktoken is not loaded here (its o200k build takes over a
// second): the expected counts below are literals, each verified in Node against js-tiktoken's
// `getEncoding("o200k_base").encode(text, [], []).length` (test/unit/tokenizer.test.ts compares the two at length).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectLoadedOnce } from "./asset-loads.ts";
import { TABLE_URL, createTokenCounterLoader, loadTokenCounter } from "../../src/catalog/tokenizer.ts";

/** Texts and their o200k_base counts, as js-tiktoken 1.0.21 gives them (checked in Node, see above). */
const KNOWN: ReadonlyArray<readonly [string, number]> = [
  ["hello world", 2],
  ["", 0],
  ["<|endoftext|>", 7],
  ["it's 1234567 日本語 👨‍👩‍👧 e\u0301\r\n\r\n   x", 20],
  [
    '[{"name":"get-sum","description":"Returns the sum of two numbers.","input_schema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]',
    48,
  ],
];

describe("token counter in workerd", () => {
  it("loads the table through env.ASSETS and counts as js-tiktoken does", async () => {
    const counter = await loadTokenCounter(env.ASSETS);
    for (const [text, tokens] of KNOWN) expect([text, counter.count(text)]).toEqual([text, tokens]);
    // The isolate's loader keeps what it loaded.
    expect(await loadTokenCounter(env.ASSETS)).toBe(counter);
  });

  it("the table is an asset of the Worker, read through the binding", async () => {
    const response = await env.ASSETS.fetch(TABLE_URL);
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("dmtk");
    expect(bytes.length).toBeGreaterThan(2_000_000);
  });

  it("concurrent loads share one fetch; a failed one is tried again", async () => {
    const counter = await expectLoadedOnce(createTokenCounterLoader(), /tokenizer table missing: .* 404/);
    expect(counter.count(KNOWN[0]![0])).toBe(KNOWN[0]![1]);
  });
});
