// The static embedder inside workerd: its table comes through the real static-assets binding (wrangler.toml's
// [assets], read by the pool, the committed assets/embedder/potion-base-4m-int8.bin), and loads are shared. The
// expected cosines are SOURCE.md's reference values (test/unit/embedder.test.ts checks all five in Node).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectLoadedOnce } from "./asset-loads.ts";
import { EMBEDDING_TABLE_URL, cosine, createStaticEmbedderLoader, loadStaticEmbedder } from "../../src/catalog/embedder.ts";

describe("static embedder in workerd", () => {
  it("loads the table through env.ASSETS and embeds as in Node", async () => {
    const embedder = await loadStaticEmbedder(env.ASSETS);
    expect([embedder.modelId, embedder.dimension]).toEqual(["potion-base-4M-int8", 128]);
    const [issue, bug, weather] = await embedder.embed(["create a github issue", "open a new bug report in the repository", "get the weather forecast for Paris"]);
    expect(cosine(issue!, bug!)).toBeCloseTo(0.5795, 3);
    expect(cosine(issue!, weather!)).toBeCloseTo(-0.0722, 3);
    expect(await loadStaticEmbedder(env.ASSETS)).toBe(embedder);
  });

  it("the table is an asset of the Worker, read through the binding", async () => {
    const response = await env.ASSETS.fetch(EMBEDDING_TABLE_URL);
    expect(response.status).toBe(200);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("dmem");
    // 29,528 rows of 128 bytes, and the vocabulary with its hash table.
    expect(bytes.length).toBeGreaterThan(29_528 * 128);
  });

  it("concurrent loads share one fetch; a failed one is tried again", async () => {
    await expectLoadedOnce(createStaticEmbedderLoader(), /embedding table missing: .* 404/);
  });
});
