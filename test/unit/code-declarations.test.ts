// Code mode's names and declarations (src/catalog/code-names.ts, declarations.ts): every tool of every corpus
// catalog declared, and the declarations compiled by TypeScript itself (strict, in memory, one file per server);
// hand-made schemas for each JSON Schema construct, checked by what the declared type accepts and refuses; names
// that are identifiers, unique, stable and reversible; and the declarations' tokens against the JSON's.
import { getEncoding } from "js-tiktoken";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { CORPUS_SERVERS } from "../../bench/tokens.ts";
import { corpusFiles, loadCorpus } from "../../harness/replay-server.ts";
import { IDENTIFIER, codePaths, identifierOf, methodNames, namespaceNames, splitCodePath } from "../../src/catalog/code-names.ts";
import { shortHash } from "../../src/catalog/direct-names.ts";
import { DECLARATION_LIMITS, declareMethod, methodDeclaration, namespaceDeclaration, schemaType, type DeclarableTool } from "../../src/catalog/declarations.ts";

interface CorpusTool extends DeclarableTool {
  name: string;
}

// Every corpus file, under the name the benchmarks give it in a team config (`azure-devops`, `gitlab-lite`, …).
const corpus = corpusFiles().map((file) => ({
  server: CORPUS_SERVERS.find((s) => `${s.file}.json` === file)?.name ?? file.replace(/\.json$/, ""),
  tools: loadCorpus(file).tools as CorpusTool[],
}));
const namespaceOf = new Map([...namespaceNames(corpus.map((c) => c.server))].map(([ns, server]) => [server, ns]));

/** A server's namespace declaration, its methods in catalog order. */
function serverDeclaration(server: string, tools: readonly CorpusTool[]): string {
  const methodOf = new Map([...methodNames(tools.map((t) => ({ tool: t.name, registryName: t.name })))].map(([m, r]) => [r, m]));
  return namespaceDeclaration(namespaceOf.get(server)!, tools.map((t) => methodDeclaration(methodOf.get(t.name)!, t)));
}

const declarations = new Map(corpus.map((c) => [c.server, serverDeclaration(c.server, c.tools)]));

const COMPILER: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, lib: ["lib.es2022.d.ts"], types: [] };
/** The standard library's files, parsed once for every program of this file. */
const libraries = new Map<string, ts.SourceFile | undefined>();

/** TypeScript's diagnostics for in-memory files (name → text), as `file:line: message`. */
function compile(files: Record<string, string>): string[] {
  const host = ts.createCompilerHost(COMPILER);
  const fromDisk = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language) => {
    const text = files[name];
    if (text !== undefined) return ts.createSourceFile(name, text, language, true);
    if (!libraries.has(name)) libraries.set(name, fromDisk(name, language));
    return libraries.get(name);
  };
  host.fileExists = (name) => name in files || ts.sys.fileExists(name);
  host.readFile = (name) => files[name] ?? ts.sys.readFile(name);
  const program = ts.createProgram(Object.keys(files), COMPILER, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `${d.file?.fileName ?? "?"}:${line}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}

/**
 * A file checking what the input type of a method declared from `schema` accepts and refuses: each `good` value
 * must compile, each `bad` one must be an error (`@ts-expect-error` is itself an error when nothing fails).
 */
function checks(schema: unknown, good: readonly string[], bad: readonly string[] = []): string {
  const lines = [namespaceDeclaration("t", [methodDeclaration("m", { inputSchema: schema })])];
  lines.push("type V = Exclude<Parameters<typeof t.m>[0], undefined>;");
  good.forEach((value, i) => lines.push(`const good${i}: V = ${value};`));
  bad.forEach((value, i) => lines.push("// @ts-expect-error", `const bad${i}: V = ${value};`));
  return lines.join("\n");
}

/** Every schema node of a tool (input and output), for counting descriptions. */
function* nodes(schema: unknown): Generator<Record<string, unknown>> {
  if (typeof schema !== "object" || schema === null) return;
  if (Array.isArray(schema)) {
    for (const item of schema) yield* nodes(item);
    return;
  }
  const node = schema as Record<string, unknown>;
  yield node;
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties" || key === "$defs" || key === "definitions") for (const sub of Object.values(value as object)) yield* nodes(sub);
    else if (["items", "prefixItems", "additionalProperties", "anyOf", "oneOf", "allOf"].includes(key)) yield* nodes(value);
  }
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe("corpus declarations", () => {
  it("declares every tool of every catalog in a namespace that TypeScript accepts under --strict", { timeout: 60_000 }, () => {
    expect(corpus.length).toBe(20);
    const files = Object.fromEntries([...declarations].map(([server, text]) => [`/corpus/${server}.ts`, text]));
    // A program that uses the declarations as a model would: the call compiles, a wrong argument does not.
    const github = namespaceOf.get("github")!;
    files["/corpus/use.ts"] = [
      `async function use() {`,
      `  await ${github}.create_issue({ owner: "o", repo: "r", title: "t", labels: ["bug"] });`,
      `  await everything.get_sum({ a: 1, b: 2 });`,
      `  const listed = await sentry.find_projects({ organizationSlug: "acme" });`,
      `  listed.projects.map((p) => p.slug.toUpperCase());`,
      `  // @ts-expect-error: owner is a string`,
      `  await ${github}.create_issue({ owner: 1, repo: "r", title: "t" });`,
      `  // @ts-expect-error: title is required`,
      `  await ${github}.create_issue({ owner: "o", repo: "r" });`,
      `}`,
      `export {};`,
    ].join("\n");
    const started = performance.now();
    expect(compile(files)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(30_000);
    // Every tool has its method, once, and no cut was needed for any corpus schema.
    for (const { server, tools } of corpus) {
      const text = declarations.get(server)!;
      for (const [method] of methodNames(tools.map((t) => ({ tool: t.name, registryName: t.name })))) {
        expect(occurrences(text, `\n  ${method}(`), `${server}.${method}`).toBe(1);
      }
      expect(text).not.toContain("deeper levels not declared");
      expect(text).not.toContain("too large to declare");
    }
  });

  it("writes each description once: the tool's above its method, each parameter's above the parameter", () => {
    let checked = 0;
    for (const { server, tools } of corpus) {
      const text = declarations.get(server)!;
      for (const tool of tools) {
        const described = [...nodes(tool.inputSchema), ...nodes(tool.outputSchema)]
          .map((n) => n.description)
          .filter((d): d is string => typeof d === "string");
        const all = [tool.description ?? "", ...described];
        for (const description of new Set(described)) {
          const d = description.trim();
          // Only descriptions the comment writes as they are, and that no other text of the server contains.
          if (d === "" || /[\n\r]|\*\//.test(d) || all.some((other) => other !== description && other.includes(d))) continue;
          const elsewhere = corpus.find((c) => c.server === server)!.tools.filter((t) => t !== tool);
          if (elsewhere.some((t) => JSON.stringify([t.description, t.inputSchema, t.outputSchema]).includes(JSON.stringify(d).slice(1, -1)))) continue;
          expect(occurrences(text, d), `${server}/${tool.name}: ${d}`).toBe(described.filter((x) => x === description).length);
          checked++;
        }
        if (tool.description?.trim() && !/\n|\*\//.test(tool.description)) expect(text).toContain(`/** ${tool.description.trim()}`);
      }
    }
    expect(checked).toBeGreaterThan(300);
  });

  it("costs no more tokens than the tools' JSON (o200k)", () => {
    const encoder = getEncoding("o200k_base");
    const count = (text: string) => encoder.encode(text, [], []).length;
    let declared = 0;
    let json = 0;
    let withOutput = 0;
    for (const { server, tools } of corpus) {
      declared += count(declarations.get(server)!);
      json += count(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))));
      withOutput += count(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema, output_schema: t.outputSchema }))));
    }
    const ratio = declared / json;
    console.log(
      `code declarations: ${declared} tokens for ${corpus.reduce((n, c) => n + c.tools.length, 0)} tools; host JSON ${json} (${ratio.toFixed(3)}×), with output schemas ${withOutput} (${(declared / withOutput).toFixed(3)}×)`,
    );
    expect(json).toBe(117_761); // the corpus README's host tokens: the baseline is the one it documents
    expect(ratio).toBeLessThanOrEqual(1.0);
  });

  it("shortens descriptions in the brief form (what describe answers by default), still valid TypeScript, saying so with …", { timeout: 60_000 }, () => {
    const encoder = getEncoding("o200k_base");
    const count = (text: string) => encoder.encode(text, [], []).length;
    const brief = { ...DECLARATION_LIMITS, brief: true };
    let full = 0;
    let short = 0;
    let shortened = 0;
    const files: Record<string, string> = {};
    for (const { server, tools } of corpus) {
      const methods = [...methodNames(tools.map((t) => ({ tool: t.name, registryName: t.name })))];
      const declared = methods.map(([method, name]) => declareMethod(method, tools.find((t) => t.name === name)!, brief));
      shortened += declared.filter((d) => d.shortened).length;
      const text = namespaceDeclaration(namespaceOf.get(server)!, declared.map((d) => d.text));
      files[`/brief/${server}.ts`] = text;
      short += count(text);
      full += count(declarations.get(server)!);
    }
    console.log(`brief declarations: ${short} tokens against ${full} whole (${(short / full).toFixed(3)}×); ${shortened} of 421 tools shortened`);
    expect(compile(files)).toEqual([]);
    // Tool descriptions shortened, parameter descriptions whole (their examples are what a call is written from):
    // 0.673× on the corpus; cutting parameters too gave under 0.6× and lost the examples.
    expect(short / full).toBeLessThan(0.7);

    // CircleCI's usage guide goes; the first sentence of the tool stays, ending in …; each parameter's description whole.
    const circleci = corpus.find((c) => c.server.includes("circleci"))!.tools.find((t) => t.name === "get_latest_pipeline_status")!;
    const one = declareMethod("get_latest_pipeline_status", circleci, brief);
    expect(one.shortened).toBe(true);
    expect(one.text).toMatch(/^\/\*\* This tool retrieves the status of the latest pipeline for a CircleCI project … \*\/\n/);
    expect(one.text).not.toContain("Common use cases");
    expect(one.text).toContain('/** The project slug from listFollowedProjects tool (e.g., "gh/organization/project"). When using this option, branch must also be provided. */');
    expect(one.text).toContain('For example: "feature/my-branch", "bugfix/123", "main", "master" etc. */');
    expect(count(one.text)).toBeLessThan(count(methodDeclaration("get_latest_pipeline_status", circleci)) / 2);
    // A description that is one short sentence is left as it is, and nothing says it was cut.
    const plain = declareMethod("echo", { description: "Echoes back the input.", inputSchema: { type: "object", properties: { message: { type: "string", description: "What to echo." } } } }, brief);
    expect(plain).toEqual({ text: declareMethod("echo", { description: "Echoes back the input.", inputSchema: { type: "object", properties: { message: { type: "string", description: "What to echo." } } } }).text, shortened: false });
  });
});

describe("code names", () => {
  it("names every corpus tool with an identifier, unique in its namespace, and maps it back to the registry name", () => {
    const tools = corpus.flatMap((c) => c.tools.map((t) => ({ server: c.server, tool: t.name, registryName: `${c.server}/${t.name}` })));
    const paths = codePaths(
      corpus.map((c) => c.server),
      tools,
    );
    expect(paths.size).toBe(421);
    expect(new Set(paths.values()).size).toBe(421);
    for (const [path, registryName] of paths) {
      const split = splitCodePath(path);
      expect(split, path).toBeDefined();
      const tool = tools.find((t) => t.registryName === registryName)!;
      expect(namespaceOf.get(tool.server)).toBe(split!.namespace);
    }
    expect(paths.get("github.create_pull_request")).toBe("github/create_pull_request");
    expect(paths.get("azure_devops.repo_pull_request_write")).toBe("azure-devops/repo_pull_request_write");
    expect(paths.get("everything.get_sum")).toBe("everything/get-sum");
    expect(paths.get("mongodb.export")).toBe("mongodb/export");
    // Stable: the same tools in another order give the same paths.
    const shuffled = [...tools].reverse();
    expect([...codePaths([...corpus.map((c) => c.server)].reverse(), shuffled)].sort()).toEqual([...paths].sort());
  });

  it("keeps namespaces off reserved words and the program's globals, and handles digits, accents and other scripts", () => {
    const servers = ["class", "default", "JSON", "console", "fetch", "2fa", "créer", "日本", "my-server", "crm_v2", "$"];
    const names = namespaceNames(servers);
    const of = new Map([...names].map(([ns, server]) => [server, ns]));
    expect(Object.fromEntries(of)).toEqual({
      class: "class_",
      default: "default_",
      JSON: "JSON_",
      console: "console_",
      fetch: "fetch_",
      "2fa": "_2fa",
      créer: "creer",
      日本: "__",
      "my-server": "my_server",
      crm_v2: "crm_v2",
      $: "$",
    });
    for (const ns of names.keys()) expect(ns).toMatch(IDENTIFIER);
    // Each one can be a const of a strict-mode module.
    expect(compile({ "/names.ts": [...names.keys()].map((ns) => `export const ${ns} = 1;`).join("\n") })).toEqual([]);
    expect(identifierOf("")).toBe("_");
  });

  it("gives names that read alike the plain form only for the one that needed no change, the others a hash", () => {
    const methods = methodNames(["get_sum", "get-sum", "get.sum", "get sum"].map((tool) => ({ tool, registryName: `s/${tool}` })));
    expect(methods.get("get_sum")).toBe("s/get_sum");
    expect(methods.get(`get_sum_${shortHash("s/get-sum")}`)).toBe("s/get-sum");
    expect(methods.get(`get_sum_${shortHash("s/get.sum")}`)).toBe("s/get.sum");
    expect(methods.size).toBe(4);
    // Without an exact one, all of them are hashed: none gets the plain name by the order it came in.
    const alike = methodNames(["a-b", "a.b"].map((tool) => ({ tool, registryName: tool })));
    expect([...alike.keys()].sort()).toEqual([`a_b_${shortHash("a-b")}`, `a_b_${shortHash("a.b")}`].sort());
    // Alone, a changed name keeps its plain form.
    expect([...methodNames([{ tool: "get-sum", registryName: "get-sum" }]).keys()]).toEqual(["get_sum"]);
    // A tool literally named like another's hashed form keeps it; the hashed one moves on.
    const taken = `a_b_${shortHash("a-b")}`;
    const clash = methodNames(["a-b", "a.b", taken].map((tool) => ({ tool, registryName: tool })));
    expect(clash.get(taken)).toBe(taken);
    expect(clash.get(`a_b_${shortHash("a-b#1")}`)).toBe("a-b");
    expect(clash.size).toBe(3);
    // Two hashed names that are equal (k32728 and k261234 have the same FNV-1a hash): the first in registry-name
    // order keeps it whatever order the tools come in, the other is hashed again.
    expect(shortHash("k32728")).toBe(shortHash("k261234"));
    const twins = [
      { tool: "a-b", registryName: "k32728" },
      { tool: "a.b", registryName: "k261234" },
    ];
    const h = shortHash("k32728");
    expect([...methodNames(twins)].sort()).toEqual([[`a_b_${h}`, "k261234"], [`a_b_${shortHash("k32728#1")}`, "k32728"]]);
    expect([...methodNames([...twins].reverse())].sort()).toEqual([...methodNames(twins)].sort());
    // Namespaces: a server named like another's changed form.
    const servers = namespaceNames(["class", "class_", "my-server", "my_server"]);
    expect(servers.get("class_")).toBe("class_");
    expect(servers.get(`class__${shortHash("class")}`)).toBe("class");
    expect(servers.get("my_server")).toBe("my_server");
    expect(servers.get(`my_server_${shortHash("my-server")}`)).toBe("my-server");
  });

  it("keeps reserved words as method names (they are property names) and declares them so that TypeScript accepts them; names JavaScript looks up itself get `_`", () => {
    const tools = ["export", "delete", "new", "constructor", "then", "123", "ça-va", "x/y"].map((tool) => ({ tool, registryName: tool }));
    const methods = methodNames(tools);
    expect([...methods.keys()].sort()).toEqual(["_123", "ca_va", "constructor_", "delete", "export", "new", "then_", "x_y"]);
    const text = namespaceDeclaration("ns", [...methods.keys()].map((m) => methodDeclaration(m, { inputSchema: { type: "object", properties: {} } })));
    const use = [...methods.keys()].map((m) => `void ns.${m}();`).join("\n");
    expect(compile({ "/reserved.ts": `${text}\n${use}` })).toEqual([]);
  });

  it("splits a code path into namespace and method, and nothing else", () => {
    expect(splitCodePath("github.create_issue")).toEqual({ namespace: "github", method: "create_issue" });
    expect(splitCodePath("github")).toBeUndefined();
    expect(splitCodePath("a.b.c")).toBeUndefined();
    expect(splitCodePath("a-b.c")).toBeUndefined();
    expect(splitCodePath(".c")).toBeUndefined();
  });
});

describe("declarations of hand-made schemas", () => {
  it("writes a method: the tool's description, each parameter's once, optional parameters, and the output type", () => {
    const tool: DeclarableTool = {
      description: "Creates a pull request.\n\nThe branch must exist.",
      inputSchema: {
        type: "object",
        properties: {
          title: { type: "string", description: "The title" },
          draft: { type: "boolean", default: false },
          base: { type: "string", description: "Target branch", default: "main" },
        },
        required: ["title"],
      },
      outputSchema: { type: "object", properties: { number: { type: "integer" } }, required: ["number"] },
    };
    expect(methodDeclaration("create_pull_request", tool)).toBe(
      [
        "/**",
        " * Creates a pull request.",
        " *",
        " * The branch must exist.",
        " */",
        "create_pull_request(input: {",
        "  /** The title */",
        "  title: string;",
        "  /** @default false */",
        "  draft?: boolean;",
        '  /** Target branch @default "main" */',
        "  base?: string;",
        "}): Promise<{",
        "  number: number;",
        "}>;",
      ].join("\n"),
    );
    // No output schema: unknown. No parameter: none. Nothing required: the input may be left out.
    expect(methodDeclaration("ping", { inputSchema: { type: "object", properties: {} } })).toBe("ping(): Promise<unknown>;");
    expect(methodDeclaration("list", { inputSchema: { type: "object", properties: { page: { type: "number" } } } })).toBe(
      "list(input?: {\n  page?: number;\n}): Promise<unknown>;",
    );
    expect(namespaceDeclaration("gh", ["ping(): Promise<unknown>;"], "GitHub")).toBe("/** GitHub */\ndeclare const gh: {\n  ping(): Promise<unknown>;\n};");
  });

  it("types enum, const, nullable unions and type arrays", () => {
    expect(schemaType({ enum: ["a", "b", 1, null, true] })).toBe('"a" | "b" | 1 | null | true');
    expect(schemaType({ type: "string", const: "x" })).toBe('"x"');
    expect(schemaType({ type: ["string", "null"] })).toBe("string | null");
    expect(schemaType({ type: "integer", nullable: true })).toBe("number | null");
    expect(schemaType({ anyOf: [{ type: "string" }, { type: "null" }] })).toBe("string | null");
    expect(schemaType({ oneOf: [{ type: "number" }, { type: "number" }] })).toBe("number");
    expect(schemaType({ type: ["string", "number", "boolean", "null"] })).toBe("string | number | boolean | null");
    expect(schemaType({})).toBe("unknown");
    expect(schemaType(false)).toBe("never");
    const file = [
      checks({ enum: ["a", "b", -1, null] }, ['"a"', "-1", "null"], ['"c"', "1"]),
      checks({ const: { k: [1, "x"] } }, ['{ k: [1, "x"] }'], ['{ k: [2, "x"] }']),
      checks({ anyOf: [{ type: "string" }, { type: "null" }] }, ['"s"', "null"], ["1", "undefined"]),
      checks({ type: ["number", "null"] }, ["1", "null"], ['"1"']),
    ];
    expect(compile(Object.fromEntries(file.map((text, i) => [`/enum${i}.ts`, `${text}\nexport {};`])))).toEqual([]);
  });

  it("types objects: required and optional keys, quoted keys, nested arrays, tuples, maps and intersections", () => {
    const object = {
      type: "object",
      properties: {
        "needs quotes": { type: "string" },
        'say "hi"': { type: "number" },
        "back`tick${x}": { type: "boolean" },
        "line\nbreak": { type: "null" },
        matrix: { type: "array", items: { type: "array", items: { type: "number" } } },
        either: { type: "array", items: { anyOf: [{ type: "string" }, { type: "number" }] } },
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
        labels: { type: "object", additionalProperties: { type: "string" } },
        open: { type: "object", additionalProperties: true },
        closed: { type: "object", properties: {}, additionalProperties: false },
        both: { allOf: [{ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, { type: "object", properties: { b: { type: "number" } }, required: ["b"] }] },
      },
      required: ["needs quotes", "matrix", "pair", "labels", "both"],
    };
    const type = schemaType(object);
    expect(type).toContain('"needs quotes": string;');
    expect(type).toContain('"say \\"hi\\""?: number;');
    expect(type).toContain("matrix: number[][];");
    expect(type).toContain("either?: (string | number)[];");
    expect(type).toContain("pair: [string, number];");
    expect(type).toContain("labels: Record<string, string>;");
    expect(type).toContain("open?: Record<string, unknown>;");
    expect(type).toContain("closed?: {};");
    const file = checks(
      object,
      [
        `{ "needs quotes": "q", 'say "hi"': 1, "back\`tick\${x}": true, "line\\nbreak": null, matrix: [[1]], either: ["a", 2], pair: ["a", 1], labels: { x: "y" }, open: { z: 1 }, both: { a: "a", b: 1 } }`,
      ],
      [
        `{ "needs quotes": "q", matrix: [1], pair: ["a", 1], labels: {}, both: { a: "a", b: 1 } }`,
        `{ "needs quotes": "q", matrix: [], pair: [1, "a"], labels: {}, both: { a: "a", b: 1 } }`,
        `{ "needs quotes": "q", matrix: [], pair: ["a", 1], labels: { x: 1 }, both: { a: "a", b: 1 } }`,
        `{ "needs quotes": "q", matrix: [], pair: ["a", 1], labels: {}, both: { a: "a" } }`,
        `{ matrix: [], pair: ["a", 1], labels: {}, both: { a: "a", b: 1 } }`,
      ],
    );
    expect(compile({ "/object.ts": `${file}\nexport {};` })).toEqual([]);
  });

  it("keeps properties beside a typed map valid TypeScript, and documents the map's values", () => {
    const schema = {
      type: "object",
      properties: { id: { type: "string" } },
      required: ["id"],
      additionalProperties: { type: "number", description: "A score" },
    };
    const type = schemaType(schema);
    expect(type).toBe("{\n  id: string;\n  /** A score */\n  [key: string]: unknown /* other keys: number */;\n}");
    expect(schemaType({ type: "object", additionalProperties: { enum: [1, -1], description: "Direction" } })).toBe(
      "{\n  /** Direction */\n  [key: string]: 1 | -1;\n}",
    );
    expect(compile({ "/map.ts": `${checks(schema, ['{ id: "a", other: 2 }'], ["{ other: 2 }"])}\nexport {};` })).toEqual([]);
  });

  it("follows $ref into $defs and definitions, and cuts recursion with a comment", () => {
    const tree = {
      type: "object",
      properties: { root: { $ref: "#/$defs/node" }, legacy: { $ref: "#/definitions/leaf" }, missing: { $ref: "#/$defs/nothing" }, remote: { $ref: "https://x/y" } },
      required: ["root"],
      $defs: {
        node: {
          type: "object",
          description: "A tree node",
          properties: { value: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } },
          required: ["value"],
        },
      },
      definitions: { leaf: { type: "integer" } },
    };
    const type = schemaType(tree);
    expect(type).toBe(
      [
        "{",
        "  /** A tree node */",
        "  root: {",
        "    value: string;",
        "    children?: unknown /* recursive: #/$defs/node */[];",
        "  };",
        "  legacy?: number;",
        "  missing?: unknown;",
        "  remote?: unknown;",
        "}",
      ].join("\n"),
    );
    // The whole document referring to itself.
    expect(schemaType({ type: "object", properties: { self: { $ref: "#" } } })).toContain("self?: {\n    self?: unknown /* recursive: # */;");
    expect(compile({ "/ref.ts": `${checks(tree, ['{ root: { value: "a", children: [1, "anything"] }, legacy: 1 }'], ['{ root: { children: [] } }'])}\nexport {};` })).toEqual([]);
  });

  it("lifts a described member of a nullable union to the property, and notes other members' descriptions inline", () => {
    const schema = {
      type: "object",
      properties: {
        region: { anyOf: [{ type: "string", description: "The region URL" }, { type: "null" }], default: null },
        target: { oneOf: [{ type: "string", description: "A name" }, { type: "number", description: "An id" }] },
      },
    };
    expect(schemaType(schema)).toBe(
      ["{", "  /** The region URL */", "  region?: string | null;", "  target?: /** A name */ string | /** An id */ number;", "}"].join("\n"),
    );
    // One described member beside another that is not null: the description stays with its member.
    expect(schemaType({ type: "object", properties: { x: { anyOf: [{ type: "string", description: "A name" }, { type: "number" }] } } })).toBe(
      "{\n  x?: /** A name */ string | number;\n}",
    );
  });

  it("escapes what could leave a comment: */ in descriptions, defaults, formats and refs", () => {
    const tool: DeclarableTool = {
      description: "Globs like src/**/*.ts */ declare const evil: 1; /*",
      inputSchema: {
        type: "object",
        properties: {
          glob: { type: "string", description: "Pattern, e.g. **/*.md", default: "*/", format: "a*/b" },
          "*/": { type: "string", description: "odd key" },
          mode: { enum: ["*/", "`${x}`", 'a"b', "\\"] },
        },
        required: ["glob"],
      },
    };
    const text = namespaceDeclaration("esc", [methodDeclaration("m", tool)]);
    expect(text).toContain("src/**\\/*.ts *\\/ declare const evil");
    expect(text).toContain('/** Pattern, e.g. **\\/*.md @default "*\\/" @format a*\\/b */');
    // The text is still one declaration: `evil` was not declared, and the enum's strings are the schema's.
    const file = `${text}\ntype M = NonNullable<Parameters<typeof esc.m>[0]>["mode"];\nconst ok: M[] = ["*/", "\`\${x}\`", 'a"b', "\\\\"];\n// @ts-expect-error\nconst bad: M = "x";\n// @ts-expect-error\nevil;\nexport {};`;
    expect(compile({ "/escape.ts": file })).toEqual([]);
  });

  it("cuts schemas deeper than the limit and lowers the depth for huge ones, in bounded time", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 30; i++) deep = { type: "object", properties: { next: deep } };
    const cut = schemaType(deep);
    expect(occurrences(cut, "next?:")).toBe(DECLARATION_LIMITS.maxDepth);
    expect(cut).toContain("next?: unknown /* deeper levels not declared */;");
    expect(schemaType(deep, { maxDepth: 2, maxChars: 1000 })).toBe(
      "{\n  next?: {\n    next?: unknown /* deeper levels not declared */;\n  };\n}",
    );

    // 5,000 parameters with long descriptions: even the top level does not fit.
    const huge = {
      type: "object",
      properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: "string", description: "x".repeat(40) }])),
    };
    let started = performance.now();
    expect(methodDeclaration("huge", { inputSchema: huge })).toBe("huge(input?: Record<string, unknown> /* too large to declare */): Promise<unknown>;");
    expect(performance.now() - started).toBeLessThan(1000);

    // Wide and deep: the top levels fit once the depth is lowered.
    const wide = (level: number): Record<string, unknown> =>
      level === 0 ? { type: "string", description: "y".repeat(50) } : { type: "object", properties: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, wide(level - 1)])) };
    const lowered = schemaType(wide(6));
    expect(lowered.length).toBeLessThan(DECLARATION_LIMITS.maxChars * 1.5);
    expect(lowered).toContain("k0?: {");
    expect(lowered).toContain("unknown /* deeper levels not declared */");

    // $refs fanning out 2^20 ways to schemas that write nothing: bounded by the nodes visited, not by the output
    // (unbounded, this takes seconds; 2^40 would never end).
    const defs: Record<string, unknown> = { d20: {} };
    for (let i = 0; i < 20; i++) defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    started = performance.now();
    expect(schemaType({ $ref: "#/$defs/d0", $defs: defs })).toBe(`Record<string, unknown> /* too large to declare */`);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(compile({ "/deep.ts": `declare const d: { m(input: ${cut}): Promise<unknown>; w(input: ${lowered}): Promise<unknown> };\nexport {};` })).toEqual([]);
  });

  it("survives schemas that are not what they should be", () => {
    for (const odd of [null, 3, "string", [], { type: 7 }, { properties: [] }, { required: "x", properties: { x: {} } }, { $ref: "#/%zz" }, { items: true }, { enum: [] }]) {
      expect(() => schemaType(odd), JSON.stringify(odd)).not.toThrow();
    }
    expect(schemaType({ enum: [] })).toBe("never");
    expect(schemaType({ items: true })).toBe("unknown[]");
    expect(methodDeclaration("m", {})).toBe("m(input: unknown): Promise<unknown>;");
  });
});
