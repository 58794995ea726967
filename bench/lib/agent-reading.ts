// The agent-path benchmark's reading of answers (bench/agent-path.ts): pure functions that pull out of the proxy's
// answers what a model reading them would take: the top hit, the lazy servers offered, a toolset handle, a hint
// naming a call, the servers the catalog names, a tool's fields (from a JSON Schema or a TypeScript declaration).
// Structured content is read where an answer has it; the text is the fallback, so rewordings do not break a run.

/** What the agent reads of one answer. */
export interface Answer {
  text: string;
  structured?: Record<string, unknown> | undefined;
  isError: boolean;
}

/** One input field of a tool, as the agent understands it. */
export interface Field {
  name: string;
  required: boolean;
  /** JSON Schema's type word: string, number, integer, boolean, array, object (absent when not said). */
  type?: string | undefined;
  enum?: string[] | undefined;
  description: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Names in a structured list of `{name}` objects (the meta view's `tools` and `servers`). */
function structuredNames(structured: Record<string, unknown> | undefined, key: string): string[] | undefined {
  const list = structured?.[key];
  if (!Array.isArray(list)) return undefined;
  return list.flatMap((item) => (isRecord(item) && typeof item["name"] === "string" ? [item["name"]] : typeof item === "string" ? [item] : []));
}

/** The answer's text up to the paragraph that offers servers not loaded yet, and that paragraph. */
function splitOffered(text: string): [string, string] {
  // A nothing-useful answer: its hits come last, as weak matches; the closest servers not loaded yet are marked.
  if (/^No loaded \w+ does what /.test(text)) {
    const parts = text.split("\n\n");
    const weak = parts.find((p) => p.startsWith("Weak matches")) ?? "";
    const closest = (parts.find((p) => p.startsWith("Closest servers")) ?? "").split("\n");
    const lazy = closest.filter((line) => line.includes(" (not loaded)")).map((line) => line.replace(" (not loaded)", ""));
    return [weak.split("\n").slice(1).join("\n"), [closest[0] ?? "", ...lazy].join("\n")];
  }
  const at = text.search(/^.*not loaded yet.*$/im);
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at)];
}

/** The meta view's search hits, best first: `server/tool` names. */
export function searchHits(answer: Answer): string[] {
  const named = structuredNames(answer.structured, "tools");
  if (named !== undefined) return named;
  const [hits] = splitOffered(answer.text);
  return [...hits.matchAll(/^-?\s*([\w.-]+\/[\w.-]+)/gm)].map((m) => m[1]!);
}

/**
 * The code view's search hits, best first: `namespace.method` paths; a search narrowed to `namespace` that answers
 * its methods as bare `- method` lines gets them as paths in it.
 */
export function searchPaths(answer: Answer, namespace?: string): string[] {
  const [hits] = splitOffered(answer.text);
  const paths = [...hits.matchAll(/^-?\s*([A-Za-z_$][\w$]*\.[A-Za-z_$][\w$-]*)(?::|$)/gm)].map((m) => m[1]!);
  if (paths.length > 0 || namespace === undefined) return paths;
  return [...hits.matchAll(/^- ([A-Za-z_$][\w$]*)(?::|\(|$)/gm)].map((m) => `${namespace}.${m[1]!}`);
}

/** Servers (or namespaces) an answer offers that are not loaded yet. */
export function offeredServers(answer: Answer): string[] {
  const named = structuredNames(answer.structured, "servers");
  if (named !== undefined) return named;
  const [, offered] = splitOffered(answer.text);
  return offered
    .split("\n")
    .slice(1)
    .flatMap((line) => {
      const m = /^-?\s*([\w.-]+)(?::|$)/.exec(line.trim());
      return m ? [m[1]!] : [];
    });
}

/** A 2026 toolset handle an answer gives: structured `toolset`, else the text's `toolset "…"`. */
export function toolsetHandle(answer: Answer): string | undefined {
  const structured = answer.structured?.["toolset"];
  if (typeof structured === "string") return structured;
  const m = /toolset[":\s`]+["`]([^"`\s]+)["`]/i.exec(answer.text);
  return m?.[1];
}

/** The first object literal starting at `from` (balanced braces, strings respected), or undefined. */
function objectAt(text: string, from: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(from, i + 1);
  }
  return undefined;
}

/** A call an answer tells the agent to make (`call load_mcp {"mcp_name": "gitlab"}`), if it names one of `tools`. */
export function hintedCall(answer: Answer, tools: readonly string[]): { name: string; arguments: Record<string, unknown> } | undefined {
  for (const m of answer.text.matchAll(/\bcall `?([\w-]+)`? (?=\{)/g)) {
    if (!tools.includes(m[1]!)) continue;
    const literal = objectAt(answer.text, m.index + m[0].length);
    if (literal === undefined) continue;
    try {
      const args: unknown = JSON.parse(literal);
      if (isRecord(args)) return { name: m[1]!, arguments: args };
    } catch {
      // Not JSON: not a call the agent can copy.
    }
  }
  return undefined;
}

/** Lower-case words of a name or a sentence (camelCase and snake_case split). */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/** The servers of `known` that `text` names (a `-` or `_` in a name read as a space). */
export function namedServers(text: string, known: readonly string[]): string[] {
  const plain = (s: string) => s.toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "").join(" ");
  const said = ` ${plain(text)} `;
  return known.filter((name) => said.includes(` ${plain(name)} `));
}

/** Servers the meta view's catalog (discover_tool's description) groups its `<tools>` under (`server:` lines). */
export function catalogToolServers(description: string): string[] {
  const block = /<tools>([\s\S]*?)<\/tools>/.exec(description)?.[1] ?? "";
  return [...block.matchAll(/^([a-z][\w.-]*)(?: \(|:)/gm)].map((m) => m[1]!);
}

/** Lazy servers the meta view's catalog (discover_tool's description) names in its `<mcp_servers>` block. */
export function catalogLazyServers(description: string): string[] {
  const block = /<mcp_servers>([\s\S]*?)<\/mcp_servers>/.exec(description)?.[1] ?? "";
  return block.split("\n").flatMap((line) => {
    const m = /^([\w.-]+):/.exec(line.trim());
    return m ? [m[1]!] : [];
  });
}

/** Namespaces execute's description names (`- ns: about` lines, or `ns, ns, and …` on one line). */
export function executeNamespaces(description: string): string[] {
  const lines = [...description.matchAll(/^- ([A-Za-z_$][\w$]*)(?::|$)/gm)].map((m) => m[1]!);
  if (lines.length > 0) return lines;
  // `a, b, and 3 more: …` or `a, b.`: the names before any count.
  const inline = (/Namespaces[^:]*:\s*([^\n]*)/.exec(description)?.[1] ?? "").replace(/(,\s*)?(and\s+)?[\d,]+ more[\s\S]*$/, "").replace(/\.$/, "");
  return inline.split(/,\s*/).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n));
}

/** Fields of a JSON Schema object (its top-level properties). */
export function fieldsOfSchema(schema: unknown): Field[] {
  if (!isRecord(schema) || !isRecord(schema["properties"])) return [];
  const required = Array.isArray(schema["required"]) ? schema["required"] : [];
  return Object.entries(schema["properties"]).map(([name, raw]) => {
    const p = isRecord(raw) ? raw : {};
    const type = typeof p["type"] === "string" ? p["type"] : undefined;
    const choices = Array.isArray(p["enum"]) ? p["enum"].filter((e): e is string => typeof e === "string") : undefined;
    return { name, required: required.includes(name), type, enum: choices, description: typeof p["description"] === "string" ? p["description"] : "" };
  });
}

/** A tool's fields from discover_tool's lookup: structured `inputSchema`, else the schema JSON in its text. */
export function fieldsOfLookup(answer: Answer): Field[] {
  const structured = answer.structured?.["inputSchema"];
  if (isRecord(structured)) return fieldsOfSchema(structured);
  const at = answer.text.search(/\{"(?:type|properties|\$schema)"/);
  const literal = at < 0 ? undefined : objectAt(answer.text, at);
  if (literal !== undefined) {
    try {
      return fieldsOfSchema(JSON.parse(literal));
    } catch {
      // Fall through to a declaration.
    }
  }
  return fieldsOfDeclaration(answer.text, "");
}

/** The type word of a TypeScript type as a JSON Schema would say it, and its string choices. */
function typeOfDeclared(type: string): Pick<Field, "type" | "enum"> {
  const t = type.trim().replace(/;$/, "");
  const literals = [...t.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  if (literals.length > 0 && /^("[^"]*"\s*\|?\s*)+$/.test(t)) return { type: "string", enum: literals };
  if (t.endsWith("[]") || t.startsWith("Array<")) return { type: "array" };
  if (t === "number") return { type: "number" };
  if (t === "boolean") return { type: "boolean" };
  if (t === "string") return { type: "string" };
  return t.startsWith("{") ? { type: "object" } : {};
}

/** Fields of `method(input: { … })` in a describe answer (the first declaration when `method` is ""). */
export function fieldsOfDeclaration(text: string, method: string): Field[] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => new RegExp(`^\\s*${method === "" ? "[\\w$]+" : method.replace(/\$/g, "\\$")}\\(input\\??: \\{`).test(l));
  if (start < 0) return [];
  const fields: Field[] = [];
  let depth = 1;
  let comment = "";
  for (const line of lines.slice(start + 1)) {
    const trimmed = line.trim();
    if (depth === 1) {
      const doc = /^\/\*\*\s*(.*?)\s*\*\/$/.exec(trimmed);
      if (doc) comment = doc[1]!;
      const prop = /^"?([\w$-]+)"?(\?)?: (.*)$/.exec(trimmed);
      if (prop) {
        fields.push({ name: prop[1]!, required: prop[2] === undefined, ...typeOfDeclared(prop[3]!), description: comment });
        comment = "";
      }
    }
    depth += (trimmed.match(/\{/g) ?? []).length - (trimmed.match(/\}/g) ?? []).length;
    if (depth <= 0) break;
  }
  return fields;
}
