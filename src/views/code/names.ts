// How the code view names upstream tools: `namespace.method` paths (src/catalog/code-names.ts) over the registry's
// tools, rebuilt only when the registry's tool map changes, and the `ToolNames` a call from a program resolves by.
// Namespaces come from every configured server, so a program may name a lazy server's namespace before it is loaded.
import { PATH_SEPARATOR, codePaths, methodNames, namespaceNames, splitCodePath, type CodeNameInput } from "../../catalog/code-names.ts";
import { concealedName } from "../concealed-names.ts";
import { CODE_SEARCH } from "./definitions.ts";
import { byCodePoint } from "../../catalog/render.ts";
import type { ToolNames } from "../find-tool.ts";
import type { ExposedTool, UpstreamRegistry } from "../../upstream/registry.ts";

/** The paths the session serves now, both ways. */
interface PathIndex {
  /** `namespace.method` → the tool. */
  byPath: Map<string, ExposedTool>;
  /**
   * `namespace.<the upstream's own name>` → the tool, where that is not a path already (`everything["get-sum"]`):
   * agents read the upstream's names in other views and in search results, and a program may use them.
   */
  byOwnName: Map<string, ExposedTool>;
  /** Registry name → `namespace.method`. */
  pathOf: Map<string, string>;
}

export class CodeNames {
  readonly #registry: UpstreamRegistry;
  /** Namespace → server, and back: fixed by the config for the session's life. */
  readonly #servers: Map<string, string>;
  readonly #namespaces: Map<string, string>;
  #built: { from: Map<string, ExposedTool>; index: PathIndex } | undefined;

  constructor(registry: UpstreamRegistry) {
    this.#registry = registry;
    this.#servers = namespaceNames(registry.servers);
    this.#namespaces = new Map([...this.#servers].map(([namespace, server]) => [server, namespace]));
  }

  /** Every namespace, in config order of its server (a server the caller's policies hide whole has none). */
  namespaces(): string[] {
    return this.#registry.servers.flatMap((server) => (this.#registry.hidden(server) ? [] : [this.#namespaces.get(server)!]));
  }

  /** The server a namespace stands for (none when the caller's policies hide it whole: it does not exist for them). */
  serverOf(namespace: string): string | undefined {
    const server = this.#servers.get(namespace);
    return server === undefined || this.#registry.hidden(server) ? undefined : server;
  }

  /** The namespace of a configured server (none for one the caller's policies hide whole). */
  namespaceOf(server: string): string | undefined {
    return this.#registry.hidden(server) ? undefined : this.#namespaces.get(server);
  }

  /**
   * A path's namespace and method: `namespace.method`, or a known namespace and the upstream's own name of a tool
   * (which need not be an identifier: `everything.get-sum`).
   */
  splitPath(path: string): { namespace: string; method: string } | undefined {
    const strict = splitCodePath(path);
    if (strict) return strict;
    const at = path.indexOf(PATH_SEPARATOR);
    if (at <= 0 || at === path.length - 1) return undefined;
    const namespace = path.slice(0, at);
    return this.#servers.has(namespace) ? { namespace, method: path.slice(at + 1) } : undefined;
  }

  /** The code path of a tool the session serves, by its registry name. */
  pathOf(registryName: string): string | undefined {
    return this.#index().pathOf.get(registryName);
  }

  /** The tool a code path calls, among those the session serves now: by its method, else by the upstream's own name. */
  find(path: string): ExposedTool | undefined {
    const index = this.#index();
    return index.byPath.get(path) ?? index.byOwnName.get(path);
  }

  /** Every path the session serves now, in code-point order. */
  paths(): string[] {
    return [...this.#index().byPath.keys()].sort(byCodePoint);
  }

  /** The methods of one loaded namespace: path → tool, in method order. */
  methodsOf(namespace: string): Array<[string, ExposedTool]> {
    const prefix = `${namespace}${PATH_SEPARATOR}`;
    return [...this.#index().byPath].filter(([path]) => path.startsWith(prefix)).sort(([a], [b]) => byCodePoint(a, b));
  }

  /** The names calls from a program and describe's paths resolve by (src/views/find-tool.ts). */
  toolNames(): ToolNames {
    return {
      serverOf: (path) => {
        const parts = this.splitPath(path);
        return parts ? this.serverOf(parts.namespace) : undefined;
      },
      find: (path) => this.find(path),
      names: () => this.paths(),
      findMore: `${CODE_SEARCH} finds the others`,
      notLoaded: (path, server) => `Unknown tool: "${path}". The server "${server}" could not be loaded for this program.`,
      concealed: (path) => concealedName(this.#registry, path, (tools) => this.#pathsOf(tools)),
    };
  }

  /** Code path → registry name of the given tools: each by its method, and by its upstream's own name where no path is that. */
  #pathsOf(tools: readonly CodeNameInput[]): Map<string, string> {
    const paths = codePaths(this.#registry.servers, tools);
    for (const tool of tools) {
      const own = `${this.#namespaces.get(tool.server)}${PATH_SEPARATOR}${tool.tool}`;
      if (!paths.has(own)) paths.set(own, tool.registryName);
    }
    return paths;
  }

  #index(): PathIndex {
    const tools = this.#registry.tools();
    if (this.#built?.from === tools) return this.#built.index;
    const byPath = new Map<string, ExposedTool>();
    const pathOf = new Map<string, string>();
    const byServer = new Map<string, ExposedTool[]>();
    for (const tool of tools.values()) byServer.set(tool.upstream, [...(byServer.get(tool.upstream) ?? []), tool]);
    for (const [server, list] of byServer) {
      const namespace = this.#namespaces.get(server);
      if (namespace === undefined) continue;
      const methods = methodNames(list.map((t) => ({ tool: t.tool.name, registryName: t.exposedName })));
      for (const [method, registryName] of methods) {
        const path = `${namespace}${PATH_SEPARATOR}${method}`;
        byPath.set(path, tools.get(registryName)!);
        pathOf.set(registryName, path);
      }
    }
    const byOwnName = new Map<string, ExposedTool>();
    for (const [server, list] of byServer) {
      const namespace = this.#namespaces.get(server);
      if (namespace === undefined) continue;
      for (const tool of list) {
        const own = `${namespace}${PATH_SEPARATOR}${tool.tool.name}`;
        if (!byPath.has(own)) byOwnName.set(own, tool);
      }
    }
    this.#built = { from: tools, index: { byPath, byOwnName, pathOf } };
    return this.#built.index;
  }
}
