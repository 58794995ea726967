// The search index through the real Worker and session objects: a team's sessions, each with the catalogs it read
// itself, search one index per catalog in the isolate (src/catalog/shared-indexes.ts), built by the first search.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sharedIndexBuilds } from "../../src/catalog/shared-indexes.ts";
import { connect, replayUrl, seedTeam, text } from "./helpers.ts";

describe("one search index per catalog for every session of a team", () => {
  it("builds each upstream's index at the first session's first search, and never again for later sessions", async () => {
    const token = await seedTeam("index-sharers", { mcp: { memory: { url: replayUrl("memory") }, everything: { url: env.EVERYTHING_URL } } });
    const search = async (): Promise<string> => {
      const { client } = await connect("index-sharers", token);
      const found = await client.callTool({ name: "discover_tool", arguments: { query: "wipe the relations I recorded" } });
      await client.close();
      return text(found);
    };
    const before = sharedIndexBuilds();
    const first = await search();
    expect(first.split("\n")[0]).toMatch(/^- memory\/delete_relations: /);
    // Two upstreams, two indexes, built in this isolate by the first session's object.
    expect(sharedIndexBuilds() - before).toBe(2);
    for (let n = 0; n < 3; n++) expect(await search()).toBe(first);
    expect(sharedIndexBuilds() - before).toBe(2);
  });
});
