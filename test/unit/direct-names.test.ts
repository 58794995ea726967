// The direct view's tool names: host-safe, unique, the same for the same tools whatever their order.
import { describe, expect, it } from "vitest";
import { HOST_SAFE_NAME, ambiguousServers, directNames, shortHash, type DirectNameInput } from "../../src/catalog/direct-names.ts";
import { searchHint } from "../../src/views/direct.ts";

const multi = (pairs: Array<[string, string]>): DirectNameInput[] => pairs.map(([server, tool]) => ({ server, tool, registryName: `${server}/${tool}` }));
const single = (tools: string[]): DirectNameInput[] => tools.map((tool) => ({ server: "default", tool, registryName: tool }));

describe("direct names", () => {
  it("joins server and tool with __ when that is safe, and keeps single-MCP names as they are", () => {
    expect([...directNames("multi", multi([["github", "create_issue"], ["docs", "get-page"]]))]).toEqual([
      ["docs__get-page", "docs/get-page"],
      ["github__create_issue", "github/create_issue"],
    ]);
    expect([...directNames("single", single(["echo", "get-sum"]))]).toEqual([
      ["echo", "echo"],
      ["get-sum", "get-sum"],
    ]);
  });

  it("gives a name with characters hosts refuse, or over 64 characters, its safe form and a hash", () => {
    const long = "x".repeat(70);
    const names = directNames("multi", multi([["fs", "read.file"], ["fs", "dir/list"], ["fs", long]]));
    const byRegistry = new Map([...names].map(([name, registry]) => [registry, name]));
    expect(byRegistry.get("fs/read.file")).toBe(`fs__read_file-${shortHash("fs/read.file")}`);
    expect(byRegistry.get("fs/dir/list")).toBe(`fs__dir_list-${shortHash("fs/dir/list")}`);
    expect(byRegistry.get(`fs/${long}`)).toHaveLength(64);
    expect(byRegistry.get(`fs/${long}`)!.endsWith(`-${shortHash(`fs/${long}`)}`)).toBe(true);
    expect([...directNames("single", single(["a.b"]))][0]![0]).toBe(`a_b-${shortHash("a.b")}`);
    for (const name of names.keys()) expect(name).toMatch(HOST_SAFE_NAME);
  });

  it("keeps names apart that would read alike: a tool whose safe form is another's, servers a and a_", () => {
    // read.file and read_file have the same safe form: the exact one keeps it, the other gets a hash.
    const alike = directNames("multi", multi([["fs", "read_file"], ["fs", "read.file"]]));
    expect(alike.get("fs__read_file")).toBe("fs/read_file");
    expect(alike.size).toBe(2);
    // a + __ + _x and a_ + __ + x are both a___x; a + __ + b__c and a__b + __ + c are both a__b__c.
    expect([...ambiguousServers(["a", "a_", "a__b", "b"])].sort()).toEqual(["a_", "a__b"]);
    const servers = ["a", "a_", "a__b"];
    const names = directNames("multi", multi([["a", "_x"], ["a_", "x"], ["a", "b__c"], ["a__b", "c"]]), ambiguousServers(servers));
    expect(names.size).toBe(4);
    expect(names.get("a___x")).toBe("a/_x");
    expect(names.get("a__b__c")).toBe("a/b__c");
    // The ambiguous server's names do not depend on whether the other server is loaded.
    const alone = directNames("multi", multi([["a_", "x"], ["a__b", "c"]]), ambiguousServers(servers));
    const nameOf = (m: Map<string, string>, registry: string) => [...m].find(([, r]) => r === registry)?.[0];
    expect(nameOf(alone, "a_/x")).toBe(nameOf(names, "a_/x"));
    expect(nameOf(alone, "a__b/c")).toBe(nameOf(names, "a__b/c"));
    expect(nameOf(alone, "a_/x")).toBe(`a___x-${shortHash("a_/x")}`);
  });

  it("names the same set of tools the same, whatever order they come in", () => {
    const tools = multi([["s", "a.b"], ["s", "a_b"], ["t", "x".repeat(80)], ["t", "y"], ["u", "z/1"]]);
    const once = [...directNames("multi", tools)].sort();
    const reversed = [...directNames("multi", [...tools].reverse())].sort();
    expect(reversed).toEqual(once);
    expect(new Set(once.map(([name]) => name)).size).toBe(tools.length);
  });

  it("hashes again when a hashed name is taken already, so every name stays unique", () => {
    // A tool literally named like another's hashed form: the exact name wins, the hashed one moves on.
    const taken = `read_file-${shortHash("read.file")}`;
    const names = directNames("single", single(["read.file", taken]));
    expect(names.get(taken)).toBe(taken);
    expect(names.size).toBe(2);
    const other = [...names].find(([, registry]) => registry === "read.file")![0];
    expect(other).toBe(`read_file-${shortHash("read.file#1")}`);
  });

  it("hints at the server and the description's first sentence", () => {
    expect(searchHint("multi", "github", "Creates an issue. Needs a repository.")).toBe("github Creates an issue");
    expect(searchHint("single", "default", "Echoes back the input.")).toBe("Echoes back the input");
    expect(searchHint("multi", "github", undefined)).toBe("github");
    expect(searchHint("single", "default", undefined)).toBeUndefined();
  });
});
