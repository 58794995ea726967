// What an upstream's catalog is read as: tools/list to the end (required), then resources, resource templates and
// prompts where the upstream declares them (best-effort: -32601 is an empty list, another failure an empty list with a
// note), each list followed through its cursors but never forever. The pages are plain requests of the client's.
import { ProtocolErrorCode, StreamableHTTPClientTransport, type ResultTypeMap } from "@modelcontextprotocol/client";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import { UpstreamError, type UpstreamFault } from "../lib/errors.ts";
import type { Link } from "./client-link.ts";

/** Lists are followed through their cursors, but never forever. */
const MAX_PAGES = 100;

export type ListMethod = "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list";

/** What reading a catalog needs of the upstream's client. */
export interface CatalogSource {
  /** The upstream's configured name. */
  name: string;
  /** One page of a list. */
  page<M extends ListMethod>(method: M, cursor: string | undefined): Promise<ResultTypeMap[M]>;
  /** The link in use (after tools/list: a stale era verdict is renegotiated by the first request). */
  link(): Link;
  /** A failure as its fault, scrubbed. */
  fault(err: unknown): UpstreamFault;
  /** A failure as the client's UpstreamError. */
  convert(err: unknown): UpstreamError;
}

/** The items of every page of a list, in order. */
async function allPages<R extends { nextCursor?: string | undefined }, T>(
  name: string,
  read: (cursor: string | undefined) => Promise<R>,
  items: (r: R) => T[],
): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await read(cursor);
    out.push(...items(result));
    cursor = result.nextCursor;
    if (!cursor) return out;
  }
  throw new UpstreamError(name, { kind: "protocol", detail: `list did not end after ${MAX_PAGES} pages` });
}

/** A catalog of `tools` with what the connection says of its server, the optional lists still empty. */
function describedCatalog(link: Link, tools: UpstreamCatalog["tools"]): UpstreamCatalog {
  const client = link.client;
  const catalog: UpstreamCatalog = {
    capabilities: client.getServerCapabilities() ?? {},
    tools,
    resources: [],
    resourceTemplates: [],
    prompts: [],
    notes: [],
  };
  const info = client.getServerVersion();
  if (info) catalog.serverInfo = info;
  const transport = link.transport;
  const version = transport instanceof StreamableHTTPClientTransport ? transport.protocolVersion : undefined;
  if (version) catalog.protocolVersion = version;
  const instructions = client.getInstructions();
  if (instructions) catalog.instructions = instructions;
  return catalog;
}

/** tools/list to the end (required), then resources, templates and prompts (best-effort). */
export async function readCatalog(source: CatalogSource): Promise<UpstreamCatalog> {
  // tools/list first: on a stale verdict it is the request that renegotiates, so what follows reads the new link.
  let tools: UpstreamCatalog["tools"];
  try {
    tools = await allPages(source.name, (cursor) => source.page("tools/list", cursor), (r) => r.tools);
  } catch (err) {
    throw source.convert(err);
  }
  const catalog = describedCatalog(source.link(), tools);
  const caps = catalog.capabilities;
  const optional = async <T>(what: string, enabled: unknown, read: () => Promise<T[]>): Promise<T[]> => {
    if (!enabled) return [];
    try {
      return await read();
    } catch (err) {
      const fault = source.fault(err);
      // -32601 to an advertised list is common (see shared/corpus): the list is empty, not a failure.
      if (!(fault.kind === "rpc" && fault.code === ProtocolErrorCode.MethodNotFound)) {
        catalog.notes.push(`${what}: ${new UpstreamError(source.name, fault).message}`);
      }
      return [];
    }
  };
  const list = <M extends ListMethod, T>(method: M, items: (r: ResultTypeMap[M]) => T[]) => () =>
    allPages(source.name, (cursor) => source.page(method, cursor), items);
  [catalog.resources, catalog.resourceTemplates, catalog.prompts] = await Promise.all([
    optional("resources/list", caps.resources, list("resources/list", (r) => r.resources)),
    optional("resources/templates/list", caps.resources, list("resources/templates/list", (r) => r.resourceTemplates)),
    optional("prompts/list", caps.prompts, list("prompts/list", (r) => r.prompts)),
  ]);
  return catalog;
}
