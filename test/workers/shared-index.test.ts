// The search index through the real Worker and session objects: a team's sessions, each with the catalogs it read
// itself, search one index per catalog in the isolate (src/catalog/shared-indexes.ts), built by the first search; an
// isolate with none takes the ones stored with the catalogs in the team's catalog cache (src/store/stored-index.ts).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clearSharedIndexes, sharedIndexBuilds, sharedIndexLoads } from "../../src/catalog/shared-indexes.ts";
import { connect, replayUrl, seedTeam, text } from "./helpers.ts";

const searchOf = (team: string, token: string) => async (): Promise<string> => {
  const { client } = await connect(team, token);
  const found = await client.callTool({ name: "discover_tool", arguments: { query: "wipe the relations I recorded" } });
  await client.close();
  return text(found);
};

describe("one search index per catalog for every session of a team", () => {
  it("takes the indexes stored with the catalogs in an isolate that has none: nothing built", async () => {
    const token = await seedTeam("index-storers", { mcp: { memory: { url: replayUrl("memory") }, everything: { url: env.EVERYTHING_URL } } });
    const search = searchOf("index-storers", token);
    const first = await search();
    // As a new isolate meets the team: no index kept, the catalog cache's entries written by the first session.
    clearSharedIndexes();
    const [builds, loads] = [sharedIndexBuilds(), sharedIndexLoads()];
    expect(await search()).toBe(first);
    expect(sharedIndexLoads() - loads).toBe(2);
    expect(sharedIndexBuilds() - builds).toBe(0);
  });

  it("builds each upstream's index at the first session's first search, and never again for later sessions", async () => {
    const token = await seedTeam("index-sharers", { mcp: { memory: { url: replayUrl("memory") }, everything: { url: env.EVERYTHING_URL } } });
    const search = searchOf("index-sharers", token);
    // Another team with the same catalogs may have left their indexes in this isolate.
    clearSharedIndexes();
    const before = sharedIndexBuilds();
    const first = await search();
    expect(first.split("\n")[0]).toMatch(/^- memory\/delete_relations: /);
    // Two upstreams, two indexes, built in this isolate by the first session's object.
    expect(sharedIndexBuilds() - before).toBe(2);
    for (let n = 0; n < 3; n++) expect(await search()).toBe(first);
    expect(sharedIndexBuilds() - before).toBe(2);
  });
});
