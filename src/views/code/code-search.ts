// The code view's `search`: the team's loaded APIs ranked as discover_tool's search ranks them, answered as
// `namespace.method` lines, with the namespaces not loaded yet that match. Narrowed to a namespace not loaded yet, it
// loads it first, as describe and execute do.
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { HostExtra } from "../../relay/bridge.ts";
import { closestServers, renderNothingUseful } from "../../catalog/render-nothing-useful.ts";
import { LAZY_HITS } from "../discover-answers.ts";
import { searchLazyServers } from "../server-search.ts";
import { isResult, parseArgs, toolError } from "../tool-errors.ts";
import { searchCatalog } from "../tool-search.ts";
import type { CodeContext } from "./code-context.ts";
import { CODE_DESCRIBE, CODE_SEARCH } from "./definitions.ts";
import { CodeSearchInput } from "./schemas.ts";

/** search's answer: the matching paths best first, then lazy namespaces that match (unless narrowed to one). */
export async function codeSearch({ session: { registry, semantic }, names, lazy }: CodeContext, raw: unknown, host: HostExtra): Promise<CallToolResult> {
  const args = parseArgs(CodeSearchInput, raw, CODE_SEARCH);
  if (isResult(args)) return args;
  await registry.ensureEager();
  let only: string | undefined;
  if (args.server !== undefined) {
    only = names.serverOf(args.server) ?? (names.namespaceOf(args.server) === undefined ? undefined : args.server);
    // A lazy namespace the caller may load is loaded here (a failed load answers as a program's call of it would).
    const failedLoad = only === undefined ? undefined : await lazy.ensure(only, host);
    if (failedLoad) return failedLoad;
    if (only === undefined || !registry.ready().some((u) => u.name === only)) {
      const loaded = registry.ready().map((u) => names.namespaceOf(u.name)!);
      return toolError("invalid_arguments", `No loaded namespace is named "${args.server}"; loaded: ${loaded.length ? loaded.join(", ") : "none"}.`);
    }
  }
  const { hits: found, judged } = await searchCatalog(registry, args.query, { limit: args.limit, server: only }, semantic);
  const hits = found.flatMap((hit) => {
    const path = names.pathOf(hit.name);
    return path === undefined ? [] : [{ path, description: hit.description }];
  });
  const servers = only === undefined ? searchLazyServers(registry, args.query, LAZY_HITS) : [];
  if (!judged.useful) {
    // Nothing loaded does it: said first, with the namespaces to look in and the weak hits marked as weak.
    const wording = { thing: "API", shown: (server: string) => names.namespaceOf(server) ?? server, openLoaded: `${CODE_DESCRIBE} {"path": "<namespace>"}` };
    const closest = closestServers(found, servers, (name) => registry.description(name));
    const text = renderNothingUseful(args.query, closest, hits.map((h) => ({ name: h.path, description: h.description })), wording);
    return { content: [{ type: "text", text }] };
  }
  const line = (name: string, description: string) => (description ? `${name}: ${description}` : name);
  const parts = [hits.map((h) => line(h.path, h.description)).join("\n")];
  if (servers.length > 0) {
    parts.push(
      ["Namespaces not loaded yet that match (search or describe one by name, or call it from a program, to load it):",
        ...servers.map((s) => line(names.namespaceOf(s.name) ?? s.name, s.description))].join("\n"),
    );
  }
  return { content: [{ type: "text", text: parts.join("\n\n") }] };
}
