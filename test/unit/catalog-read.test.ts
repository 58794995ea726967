// Reading an upstream's catalog (src/upstream/catalog-read.ts) over a stand-in source: the pages a client would fetch
// given as data, the link reduced to what the reading asks of its SDK client. The whole client reads real upstreams in
// test/unit/upstream-client.test.ts and upstream-era.test.ts.
import { ProtocolError, ProtocolErrorCode, type Client, type ResultTypeMap } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { UpstreamError } from "../../src/lib/errors.ts";
import { faultOf } from "../../src/upstream/faults.ts";
import { readCatalog, type CatalogSource, type ListMethod } from "../../src/upstream/catalog-read.ts";
import type { Link } from "../../src/upstream/client-link.ts";
import type { UpstreamSpec } from "../../src/config/validate.ts";

const SPEC = { name: "u", url: "https://u.example/mcp", transport: "streamable-http", timeout: 1000 } as UpstreamSpec;

const tool = (name: string) => ({ name, inputSchema: { type: "object" as const } });

/** A source whose lists answer from `pages` (each page's items, cursors chained), or fail with `failures`. */
function source(capabilities: Record<string, unknown>, pages: Partial<Record<ListMethod, unknown[][]>>, failures: Partial<Record<ListMethod, unknown>> = {}) {
  const asked: string[] = [];
  const key: Record<ListMethod, string> = { "tools/list": "tools", "resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts" };
  const link = {
    client: {
      getServerCapabilities: () => capabilities,
      getServerVersion: () => ({ name: "u", version: "2" }),
      getInstructions: () => "Use it well.",
    } as unknown as Client,
    transport: {},
  } as unknown as Link;
  const src: CatalogSource = {
    name: "u",
    page: async <M extends ListMethod>(method: M, cursor: string | undefined) => {
      asked.push(`${method}@${cursor ?? ""}`);
      if (failures[method]) throw failures[method];
      const list = pages[method] ?? [[]];
      const at = cursor === undefined ? 0 : Number(cursor);
      const next = at + 1 < list.length ? String(at + 1) : undefined;
      return { [key[method]]: list[at], ...(next ? { nextCursor: next } : {}) } as unknown as ResultTypeMap[M];
    },
    link: () => link,
    fault: (err) => faultOf(err, { spec: SPEC, secrets: [], overflowLimit: undefined, sessionId: undefined, retryAfterMs: undefined, closed: false }),
    convert: (err) => (err instanceof UpstreamError ? err : new UpstreamError("u", src.fault(err))),
  };
  return { src, asked };
}

describe("readCatalog", () => {
  it("follows tools/list through its cursors and asks only for the lists the upstream declares", async () => {
    const { src, asked } = source({ tools: {}, prompts: {} }, { "tools/list": [[tool("a")], [tool("b")], [tool("c")]], "prompts/list": [[{ name: "p" }]] });
    const catalog = await readCatalog(src);
    expect(catalog.tools.map((t) => t.name)).toEqual(["a", "b", "c"]);
    expect(catalog.prompts).toEqual([{ name: "p" }]);
    expect(catalog.resources).toEqual([]);
    expect(asked).toEqual(["tools/list@", "tools/list@1", "tools/list@2", "prompts/list@"]);
    expect(catalog).toMatchObject({ serverInfo: { name: "u", version: "2" }, instructions: "Use it well.", notes: [] });
    expect(catalog.protocolVersion).toBeUndefined();
  });

  it("gives up on a list that does not end after 100 pages", async () => {
    const endless = Array.from({ length: 101 }, (_, i) => [tool(`t${i}`)]);
    const { src } = source({ tools: {} }, { "tools/list": endless });
    await expect(readCatalog(src)).rejects.toMatchObject({ fault: { kind: "protocol", detail: "list did not end after 100 pages" } });
    const { src: hundred } = source({ tools: {} }, { "tools/list": endless.slice(0, 100) });
    expect((await readCatalog(hundred)).tools).toHaveLength(100);
  });

  it("fails when tools/list fails, as the client's error", async () => {
    const { src } = source({ tools: {} }, {}, { "tools/list": new ProtocolError(-32603, "broken") });
    await expect(readCatalog(src)).rejects.toMatchObject({ fault: { kind: "rpc", code: -32603 } });
  });

  it("reads an optional list the upstream does not serve (-32601) as empty, and notes any other failure", async () => {
    const { src } = source(
      { tools: {}, resources: {}, prompts: {} },
      { "tools/list": [[tool("a")]] },
      { "resources/list": new ProtocolError(ProtocolErrorCode.MethodNotFound, "no"), "resources/templates/list": new ProtocolError(-32603, "templates broke") },
    );
    const catalog = await readCatalog(src);
    expect(catalog.resources).toEqual([]);
    expect(catalog.resourceTemplates).toEqual([]);
    expect(catalog.prompts).toEqual([]);
    expect(catalog.notes).toHaveLength(1);
    expect(catalog.notes[0]).toMatch(/^resources\/templates\/list: .*templates broke/);
  });
});
