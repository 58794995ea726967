// `npm run bench:tokens`: what a host puts in its context at session start, through the proxy under `wrangler dev`
// (config-file mode with all 20 corpus servers eager, dynamic mode with all 20 lazy, each server alone), against
// exposing every upstream tool directly; plus one discover_tool answer and one load_mcp listing. `--smoke`: the
// same path with fewer teams and calls, nothing written.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { getEncoding } from "js-tiktoken";
import type { TopLevelSpec } from "vega-lite";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { CATALOG_BUDGET } from "../src/config/schema.ts";
import { hostTokens as countHostTokens, hostView, type HostTool, type ListedTool } from "../src/catalog/budget.ts";
import { schemaType } from "../src/catalog/declarations.ts";
import { NAMESPACE_HINT, oneLine } from "../src/catalog/render.ts";
import { connectClient, provisionTeam } from "../harness/clients.ts";
import { CORPUS_DIR, corpusFiles, loadCorpus, startReplayServer, type CorpusServer } from "../harness/replay-server.ts";
import { isSmoke, median, writeResult } from "./lib/results.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { teardown } from "./lib/teardown.ts";
import { isMain, writeChart } from "./report.ts";

// ---------------------------------------------------------------------------------------------------------------
// Shared with bench/scale.ts: the corpus under the names a team would give its servers, and the token count.

export interface BenchServer {
  /** The upstream's name in the team config (and the prefix of its tools: `name/tool`). */
  name: string;
  /** The corpus file (shared/corpus/servers/<file>.json). */
  file: string;
  /** Its description in dynamic mode: what it does and when to load it, 25–35 words. */
  description: string;
}

export const CORPUS_SERVERS: readonly BenchServer[] = [
  {
    name: "gitlab",
    file: "zereight__mcp-gitlab",
    description:
      "GitLab through its API: projects, repositories, files, branches, merge requests and their discussions, issues, labels, pipelines, jobs, wikis and users. Load it to read or change anything hosted on the team's GitLab.",
  },
  {
    name: "azure-devops",
    file: "azure-devops__mcp",
    description:
      "Azure DevOps: projects and teams, Git repositories and pull requests, pipelines and build logs, work items, test plans, wikis and code search. Load it for anything tracked or built in Azure DevOps.",
  },
  {
    name: "mongodb",
    file: "mongodb-mcp-server",
    description:
      "MongoDB databases: list databases and collections, inspect schemas and indexes, run find and aggregate queries, insert, update or delete documents. Load it when a task needs data stored in MongoDB.",
  },
  {
    name: "circleci",
    file: "circleci__mcp-server-circleci",
    description:
      "CircleCI builds: find the latest pipeline of a branch, read failed job logs, find flaky tests, rerun workflows and validate config. Load it when a CircleCI build or test run fails.",
  },
  {
    name: "desktop-commander",
    file: "wonderwhy-er__desktop-commander",
    description:
      "This computer's files and shell: read, write, search and edit files, list directories, run terminal commands and manage long-running processes. Load it when a task needs the local file system or a terminal.",
  },
  {
    name: "sentry",
    file: "sentry__mcp-server",
    description:
      "Sentry error monitoring: search issues and events, read stack traces, look up releases, projects and teams, update issue status. Load it to investigate a production error or crash that Sentry reported.",
  },
  {
    name: "kubernetes",
    file: "mcp-server-kubernetes",
    description:
      "Kubernetes clusters through kubectl and Helm: list and describe pods, deployments, services and nodes, read logs, apply manifests, scale workloads and install charts. Load it for anything running on the team's clusters.",
  },
  {
    name: "stripe",
    file: "stripe__mcp",
    description:
      "Stripe payments: customers, products and prices, payment links, invoices, subscriptions, refunds, balances and disputes, plus Stripe's documentation. Load it when a task touches billing, payments or a customer's Stripe account.",
  },
  {
    name: "playwright",
    file: "playwright__mcp",
    description:
      "A web browser driven by Playwright: open pages, click, type, fill forms, read page snapshots, take screenshots, handle dialogs and tabs. Load it to use or test a real website.",
  },
  {
    name: "supabase",
    file: "supabase__mcp-server-supabase",
    description:
      "Supabase projects: create projects and branches, run SQL, apply migrations, inspect tables, logs and advisors, deploy edge functions and generate types. Load it for work on a Supabase backend or its database.",
  },
  {
    name: "github",
    file: "modelcontextprotocol__server-github",
    description:
      "GitHub: search code, repositories, issues and users, read and push files, create branches, issues and pull requests, review and merge them. Load it for work on code or issues hosted on GitHub.",
  },
  {
    name: "filesystem",
    file: "modelcontextprotocol__server-filesystem",
    description:
      "Sandboxed access to allowed local directories: read, write and edit files, create and move directories, list trees and search by name. Load it to work on local project files.",
  },
  {
    name: "gitlab-lite",
    file: "modelcontextprotocol__server-gitlab",
    description:
      "A small GitLab client: create or fork repositories, read and push files, create branches, issues and merge requests, search projects. Load it for simple GitLab edits when the full gitlab server is not needed.",
  },
  {
    name: "everything",
    file: "modelcontextprotocol__server-everything",
    description:
      "The MCP reference test server: echo, arithmetic, long-running operations with progress, sampling, elicitation, structured results, sample resources and prompts. Load it to try out or debug MCP client features, never for real work.",
  },
  {
    name: "context7",
    file: "upstash__context7-mcp",
    description:
      "Context7 library documentation: resolve a library or framework name to its ID, then fetch current, version-specific documentation and code examples. Load it before writing code against an API that may have changed.",
  },
  {
    name: "memory",
    file: "modelcontextprotocol__server-memory",
    description:
      "A persistent knowledge graph: create entities and relations, add observations, search nodes and read the whole graph. Load it to remember facts about the user, projects or decisions across conversations.",
  },
  {
    name: "google-maps",
    file: "modelcontextprotocol__server-google-maps",
    description:
      "Google Maps: geocode and reverse-geocode addresses, search places and read their details, compute distances, elevations and directions between locations. Load it for questions about where places are or how to reach them.",
  },
  {
    name: "puppeteer",
    file: "modelcontextprotocol__server-puppeteer",
    description:
      "A headless Chrome browser driven by Puppeteer: navigate, take screenshots, click, fill and select form fields, hover and run JavaScript in the page. Load it for scripted browsing or scraping.",
  },
  {
    name: "brave-search",
    file: "modelcontextprotocol__server-brave-search",
    description:
      "Brave Search: web search for current information, news and articles, and local search for businesses, restaurants and places with ratings and hours. Load it when an answer needs fresh information from the web.",
  },
  {
    name: "postgres",
    file: "modelcontextprotocol__server-postgres",
    description:
      "Read-only access to a PostgreSQL database: inspect table schemas and run SELECT queries inside read-only transactions. Load it to answer questions from the team's relational data or to check what a table contains.",
  },
];

export const wordCount = (text: string): number => text.trim().split(/\s+/).length;

/** Every corpus file is named once, and every description is 25–35 words (the "realistic" length). */
export function checkCorpusServers(): void {
  const files = corpusFiles().map((f) => f.replace(/\.json$/, ""));
  const named = CORPUS_SERVERS.map((s) => s.file);
  const missing = files.filter((f) => !named.includes(f));
  const extra = named.filter((f) => !files.includes(f));
  if (missing.length || extra.length) throw new Error(`corpus and bench names differ: missing ${missing}, extra ${extra}`);
  for (const s of CORPUS_SERVERS) {
    const n = wordCount(s.description);
    if (n < 25 || n > 35) throw new Error(`description of ${s.name} has ${n} words, not 25–35`);
  }
}

const encoder = getEncoding("o200k_base");
/** o200k_base tokens; special-token strings count as ordinary text, as in shared/corpus/count_tokens.mjs. */
export const countTokens = (text: string): number => encoder.encode(text, [], []).length;

/** What a host pays for these tools (src/catalog/budget.ts's rule), counted with js-tiktoken. */
export const hostTokens = (tools: readonly ListedTool[]): number => countHostTokens(tools, { count: countTokens });

/** The total the corpus README states for all its servers, to check this count against. */
export function readmeTotal(): { servers: number; tools: number; hostTokens: number } | undefined {
  const text = readFileSync(join(CORPUS_DIR, "..", "README.md"), "utf8");
  const m = /\*\*total \((\d+)\)\*\*[\s|]*\*\*(\d+)\*\*\s*\|\s*\*\*(\d+)\*\*/.exec(text);
  return m ? { servers: Number(m[1]), tools: Number(m[2]), hostTokens: Number(m[3]) } : undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Where the tokens of a tools/list go.

export interface Part {
  part: string;
  tokens: number;
}

function segmentLabel(segment: string, index: number): string {
  if (segment.startsWith("<tools>")) return "discover_tool description: `<tools>` catalog";
  if (segment.startsWith("<mcp_servers>")) return "discover_tool description: `<mcp_servers>` list";
  if (index === 0) return "discover_tool description: instructions";
  return "discover_tool description: dynamic instructions";
}

/**
 * Splits a tools/list into parts whose token counts add up exactly to its whole count: the host view is stripped
 * one piece at a time (discover_tool's description segment by segment from the end, the other descriptions, the
 * input schemas) and each step's saving is that piece's cost.
 */
export function breakdown(tools: readonly Tool[]): Part[] {
  const view = hostView(tools);
  const parts: Part[] = [];
  let current = view.map((t) => ({ ...t }));
  let before = countTokens(JSON.stringify(current));
  const step = (part: string, change: (tools: HostTool[]) => void) => {
    change(current);
    const after = countTokens(JSON.stringify(current));
    parts.push({ part, tokens: before - after });
    before = after;
  };
  const discover = current.findIndex((t) => t.name === "discover_tool");
  if (discover >= 0) {
    const segments = (current[discover]!.description ?? "").split("\n\n");
    for (let k = segments.length - 1; k >= 0; k--) {
      step(segmentLabel(segments[k]!, k), (ts) => {
        const kept = segments.slice(0, k).join("\n\n");
        ts[discover] = { ...ts[discover]!, description: k === 0 ? undefined : kept };
      });
    }
  }
  for (let i = 0; i < current.length; i++) {
    if (i === discover || current[i]!.description === undefined) continue;
    step(`${current[i]!.name} description`, (ts) => (ts[i] = { ...ts[i]!, description: undefined }));
  }
  for (let i = 0; i < current.length; i++) {
    step(`${current[i]!.name} input schema`, (ts) => (ts[i] = { ...ts[i]!, input_schema: undefined }));
  }
  parts.push({ part: "tool names and JSON framing", tokens: before });
  // discover_tool's segments were stripped from the end: put them back in reading order.
  const segments = parts.filter((p) => p.part.startsWith("discover_tool description")).reverse();
  return [...segments, ...parts.filter((p) => !p.part.startsWith("discover_tool description"))];
}

// ---------------------------------------------------------------------------------------------------------------
// What could still go: edits of the measured tools/list, each counted the same way. Suggestions only; the proxy
// renders none of them today. (The shorter instructions, load_mcp and use_tool descriptions and schema texts, the
// dropped 'nothing loaded' line and the bullet-less <mcp_servers> lines suggested here before are the proxy's now.)

const SHORTER_DYNAMIC_INSTRUCTIONS = "Servers under <mcp_servers> are not loaded yet: load_mcp with a server's name adds its tools to <tools>.";

export interface WhatIf {
  change: string;
  tokens: number;
  saved: number;
}

type Edit = { change: string; apply: (tools: Tool[]) => Tool[] };

const withTool = (tools: Tool[], name: string, edit: (t: Tool) => Tool): Tool[] => tools.map((t) => (t.name === name ? edit(t) : t));
/** Edits discover_tool's description segment by segment (`\n\n`-separated); a segment mapped to "" is dropped. */
const segmentEdit = (edit: (segment: string, index: number) => string) => (tools: Tool[]) =>
  withTool(tools, "discover_tool", (t) => ({
    ...t,
    description: (t.description ?? "").split("\n\n").map(edit).filter((x) => x !== "").join("\n\n"),
  }));
const catalogLines = (edit: (line: string) => string) =>
  segmentEdit((seg) => (seg.startsWith("<tools>") ? seg.split("\n").map((l) => (l.startsWith("- ") ? edit(l) : l)).join("\n") : seg));

/** Drops what the proxy validates itself anyway: `minLength`, `default`, `additionalProperties: true`. */
function leanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(leanSchema);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k, v]) => k !== "minLength" && k !== "default" && !(k === "additionalProperties" && v === true))
      .map(([k, v]) => [k, leanSchema(v)]),
  );
}
const LEAN_SCHEMAS: Edit = {
  change: "meta-tool schemas without `minLength`, `default` and `additionalProperties: true` (the proxy validates these itself)",
  apply: (tools) => tools.map((t) => ({ ...t, inputSchema: leanSchema(t.inputSchema) as Tool["inputSchema"] })),
};

/** Drops every `description` of the meta-tools' input schemas (the tools' own descriptions say what goes in). */
const NO_SCHEMA_TEXT: Edit = {
  change: "meta-tool input schemas without property descriptions",
  apply: (tools) =>
    tools.map((t) => ({
      ...t,
      inputSchema: {
        ...t.inputSchema,
        properties: Object.fromEntries(
          Object.entries(t.inputSchema.properties ?? {}).map(([k, v]) => [k, Object.fromEntries(Object.entries(v as object).filter(([key]) => key !== "description"))]),
        ),
      },
    })),
};

const CONFIG_EDITS: Edit[] = [
  { change: "catalog lines without their final period", apply: catalogLines((l) => l.replace(/\.$/, "")) },
  { change: "catalog lines without the `- ` bullet", apply: catalogLines((l) => l.slice(2)) },
  NO_SCHEMA_TEXT,
  LEAN_SCHEMAS,
];
const DYNAMIC_EDITS: Edit[] = [
  {
    change: `shorter dynamic instructions: \`${SHORTER_DYNAMIC_INSTRUCTIONS}\``,
    apply: segmentEdit((seg, i) => (i === 1 && !seg.startsWith("<") ? SHORTER_DYNAMIC_INSTRUCTIONS : seg)),
  },
  {
    change: `no \`${NAMESPACE_HINT}\` line while nothing is loaded (load_mcp's listing names the tools that way)`,
    apply: segmentEdit((seg, i) => (i === 0 ? seg.replace(`\n${NAMESPACE_HINT}`, "") : seg)),
  },
  NO_SCHEMA_TEXT,
  LEAN_SCHEMAS,
];

/**
 * The catalog as it reads when the upstream descriptions' line breaks are folded into spaces before the
 * first-sentence cut (src/catalog/render.ts oneLine, given the description with its line breaks made spaces).
 */
function foldedLines(servers: ReadonlyArray<{ name: string; catalog: CorpusServer }>): Edit {
  const fixed = new Map<string, string>();
  for (const s of servers) {
    for (const t of s.catalog.tools) fixed.set(`${s.name}/${t.name}`, oneLine(t.description?.replace(/[\t\n\r\f\v]/g, " ")));
  }
  return {
    change: "line breaks in upstream descriptions turned into spaces, not deleted, before the first-sentence cut",
    apply: segmentEdit((seg) => {
      if (!seg.startsWith("<tools>")) return seg;
      let server = "";
      return seg
        .split("\n")
        .map((l) => {
          if (!l.startsWith("- ") && l.endsWith(":")) server = l.slice(0, -1);
          const m = /^- ([^:]+): /.exec(l);
          const line = m ? fixed.get(`${server}/${m[1]}`) : undefined;
          return m && line !== undefined ? `- ${m[1]}: ${line}` : l;
        })
        .join("\n");
    }),
  };
}

/** Each edit alone, then all of them together. */
export function whatIfs(tools: readonly Tool[], edits: Edit[]): WhatIf[] {
  const base = hostTokens(tools);
  const rows = edits.map((e) => {
    const n = hostTokens(e.apply([...tools]));
    return { change: e.change, tokens: n, saved: base - n };
  });
  const all = hostTokens(edits.reduce((ts, e) => e.apply(ts), [...tools]));
  return [...rows, { change: "all of the above", tokens: all, saved: base - all }];
}

// ---------------------------------------------------------------------------------------------------------------
// The benchmark.

const pct = (ratio: number, digits = 2): string => `${(ratio * 100).toFixed(digits)}%`;
const textOf = (result: unknown): string =>
  ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");

const CONFIG_GOAL = 0.06;
/** wrangler dev's vars: the session-id key (startWranglerDev lifts the private-address rule for loopback upstreams). */
export const LOCAL_VARS = { SESSION_KEY: "bench" };
const DYNAMIC_GOAL = 0.01;

export interface Figures {
  direct: { tokens: number; oneArray: number; tools: number; servers: number; readme: ReturnType<typeof readmeTotal>; perServer: Record<string, number> };
  configFile: {
    tokens: number;
    ratio: number;
    goal: number;
    met: boolean;
    breakdown: Part[];
    catalogLines: number;
    whatIf: WhatIf[];
    /** Catalog lines where a sentence end runs into the next word (`Sentry.Use`): line breaks deleted, not folded. */
    glued: { lines: number; examples: string[] };
  };
  /** The same 20 eager servers with the default catalog_budget: what a session starts with. */
  budgeted: { budget: number; tokens: number; ratio: number };
  dynamic: {
    /** The proxy lists load_mcp and every lazy server under <mcp_servers>. */
    complete: boolean;
    tokens: number;
    ratio: number;
    goal: number;
    met: boolean;
    breakdown: Part[];
    whatIf: WhatIf[];
    descriptionWords: number;
    descriptionTokens: number;
  };
  perServer: Array<{ name: string; file: string; tools: number; direct: number; proxy: number; ratio: number }>;
  discover: {
    tool: string;
    directTokens: number;
    textTokens: number;
    structuredTokens: number;
    resultTokens: number;
    /** Tokens the typical tool's input schema would cost more pretty-printed than minified (as the text has it). */
    indentedSchemaCost: number;
    allTools?: {
      tools: number;
      direct: number;
      text: number;
      ratio: number;
      medianRatio: number;
      /** The same answers with their JSON blocks pretty-printed (as they were before they were minified). */
      indentedText: number;
      /** Every tool's input schema in three forms: pretty-printed and minified JSON, the code view's TypeScript type. */
      schemaForms: { indented: number; minified: number; declared: number };
    };
  };
  loadMcp?: {
    server: string;
    tools: number;
    directTokens: number;
    textTokens: number;
    resultTokens: number;
    afterLoadTokens: number;
    afterLoadRatio: number;
  };
  smoke: boolean;
}

/** A session that is ended (DELETE) when `fn` is done, so the proxy does not keep idle objects around. */
async function inSession<T>(url: string, token: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const { client, transport } = await connectClient(url, token);
  try {
    return await fn(client);
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

const printParts = (parts: Part[]) => {
  for (const p of parts) console.log(`  ${String(p.tokens).padStart(6)}  ${p.part}`);
};

async function main(): Promise<void> {
  const smoke = isSmoke();
  checkCorpusServers();
  const servers = CORPUS_SERVERS.map((s) => ({ ...s, catalog: loadCorpus(s.file) as CorpusServer }));

  // Direct exposure. The README's total is the sum of its per-server counts (each server's tools as one array);
  // one array of all 421 tools differs by a few tokens at the joins. The sum is the reference, as in the README.
  const perServerDirect: Record<string, number> = {};
  for (const s of servers) perServerDirect[s.name] = hostTokens(s.catalog.tools);
  const allTools = servers.flatMap((s) => s.catalog.tools);
  const directTotal = Object.values(perServerDirect).reduce((a, b) => a + b, 0);
  const oneArray = hostTokens(allTools);
  const readme = readmeTotal();
  console.log(
    `direct: ${directTotal} tokens (${allTools.length} tools of ${servers.length} servers, summed per server; corpus README total ${readme?.hostTokens ?? "not found"}; as one array ${oneArray})`,
  );
  if (readme?.hostTokens !== directTotal) console.warn(`WARNING: the direct total ${directTotal} differs from the corpus README's ${readme?.hostTokens}`);

  // The typical tool: the median by direct tokens over all corpus tools (ties by name).
  const sized = servers
    .flatMap((s) => s.catalog.tools.map((t) => ({ name: `${s.name}/${t.name}`, tokens: hostTokens([t]) })))
    .sort((a, b) => a.tokens - b.tokens || (a.name < b.name ? -1 : 1));
  const typical = sized[Math.floor((sized.length - 1) / 2)]!;
  // The typical server for load_mcp: the median by direct tokens.
  const byDirect = [...servers].sort((a, b) => perServerDirect[a.name]! - perServerDirect[b.name]!);
  const typicalServer = byDirect[Math.floor((byDirect.length - 1) / 2)]!;
  const aloneNames = smoke ? ["memory", "postgres"] : servers.map((s) => s.name);

  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-tokens-"));
  const state = join(dir, "state");
  const replay = await startReplayServer(Object.fromEntries(servers.map((s) => [s.name, { catalog: s.catalog }])));
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  try {
    const entry = (s: BenchServer, lazy: boolean) => ({ url: replay.url(s.name), ...(lazy ? { description: s.description } : {}) });
    const started = performance.now();
    const tokens: Record<string, string> = {
      // The whole catalog (the largest budget a config may set): what the catalog's lines cost, studied below.
      all: provisionTeam(dir, state, "all", { catalog_budget: CATALOG_BUDGET.max, mcp: Object.fromEntries(servers.map((s) => [s.name, entry(s, false)])) }),
      // The same team with the default budget: what a session actually starts with.
      budgeted: provisionTeam(dir, state, "budgeted", { mcp: Object.fromEntries(servers.map((s) => [s.name, entry(s, false)])) }),
      lazy: provisionTeam(dir, state, "lazy", { mcp: Object.fromEntries(servers.map((s) => [s.name, entry(s, true)])) }),
    };
    for (const name of aloneNames) {
      const s = servers.find((x) => x.name === name)!;
      tokens[`one-${name}`] = provisionTeam(dir, state, `one-${name}`, { catalog_budget: CATALOG_BUDGET.max, mcp: { [name]: entry(s, false) } });
    }
    console.log(`provisioned ${Object.keys(tokens).length} teams in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    // A copy of src/ taken now: wrangler dev restarts on every edit of src/, which would drop the sessions mid-run.
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({ persistTo: state, vars: LOCAL_VARS, config: snapshot.config });
    const url = (team: string) => `${proxy!.url}/t/${team}/mcp`;

    // Config-file mode: all 20 eager; then discover_tool answers.
    const { configTools, discover } = await inSession(url("all"), tokens.all!, async (client) => {
      const configTools = (await client.listTools()).tools;
      const description = configTools.find((t) => t.name === "discover_tool")?.description ?? "";
      const absent = servers.filter((s) => !description.includes(`\n${s.name}:\n`)).map((s) => s.name);
      if (absent.length) throw new Error(`the catalog lacks ${absent.join(", ")}:\n${description.slice(0, 1500)}`);

      const found = await client.callTool({ name: "discover_tool", arguments: { tool_name: typical.name } });
      if (found.isError) throw new Error(`discover_tool ${typical.name} failed: ${textOf(found)}`);
      const schema = (found.structuredContent as { inputSchema?: unknown } | undefined)?.inputSchema;
      const discover: Figures["discover"] = {
        tool: typical.name,
        directTokens: typical.tokens,
        textTokens: countTokens(textOf(found)),
        structuredTokens: countTokens(JSON.stringify(found.structuredContent ?? {})),
        resultTokens: countTokens(JSON.stringify(found)),
        indentedSchemaCost: countTokens(JSON.stringify(schema, null, 2)) - countTokens(JSON.stringify(schema)),
      };
      if (!smoke) {
        // Every tool's answer against its direct definition.
        let direct = 0;
        let text = 0;
        let indented = 0;
        const forms = { indented: 0, minified: 0, declared: 0 };
        const ratios: number[] = [];
        for (const t of sized) {
          const r = await client.callTool({ name: "discover_tool", arguments: { tool_name: t.name } });
          if (r.isError) throw new Error(`discover_tool ${t.name} failed: ${textOf(r)}`);
          const answer = textOf(r);
          const n = countTokens(answer);
          direct += t.tokens;
          text += n;
          ratios.push(n / t.tokens);
          // The same answer with its JSON blocks (schemas, annotations) pretty-printed instead of minified.
          const sc = (r.structuredContent ?? {}) as Record<string, unknown>;
          let alt = answer;
          for (const key of ["inputSchema", "outputSchema", "annotations"]) {
            if (sc[key] !== undefined) alt = alt.replace(JSON.stringify(sc[key]), JSON.stringify(sc[key], null, 2));
          }
          indented += countTokens(alt);
          forms.indented += countTokens(JSON.stringify(sc["inputSchema"], null, 2));
          forms.minified += countTokens(JSON.stringify(sc["inputSchema"]));
          forms.declared += countTokens(schemaType(sc["inputSchema"]));
        }
        discover.allTools = { tools: sized.length, direct, text, ratio: text / direct, medianRatio: median(ratios), indentedText: indented, schemaForms: forms };
      }
      return { configTools, discover };
    });
    const configTokens = hostTokens(configTools);
    const budgetedTools = await inSession(url("budgeted"), tokens.budgeted!, async (client) => (await client.listTools()).tools);
    const budgeted: Figures["budgeted"] = {
      budget: CATALOG_BUDGET.default,
      tokens: hostTokens(budgetedTools),
      ratio: hostTokens(budgetedTools) / directTotal,
    };
    console.log(`config-file mode, default budget ${budgeted.budget}: ${budgeted.tokens} tokens = ${pct(budgeted.ratio)} of direct`);
    const configFile: Figures["configFile"] = {
      tokens: configTokens,
      ratio: configTokens / directTotal,
      goal: CONFIG_GOAL,
      met: configTokens / directTotal <= CONFIG_GOAL,
      breakdown: breakdown(configTools),
      catalogLines: (configTools.find((t) => t.name === "discover_tool")?.description ?? "").split("\n").filter((l) => l.startsWith("- ")).length,
      whatIf: whatIfs(configTools, [foldedLines(servers), ...CONFIG_EDITS].filter((e, i) => i > 0 || hostTokens(e.apply(configTools)) !== configTokens)),
      glued: gluedLines(configTools),
    };
    console.log(
      `config-file mode: ${configTokens} tokens = ${pct(configFile.ratio)} of direct (${directTotal}); goal ≤ ${pct(CONFIG_GOAL, 0)}: ${configFile.met ? "met" : "missed"}`,
    );
    printParts(configFile.breakdown);
    if (configFile.glued.lines) console.log(`  ${configFile.glued.lines} catalog lines glue a sentence end to the next word, e.g. ${configFile.glued.examples[0]}`);
    for (const w of configFile.whatIf) console.log(`  what if: ${w.change}: ${w.tokens} (${pct(w.tokens / directTotal)}), saves ${w.saved}`);
    console.log(
      `discover_tool answer for ${typical.name}: ${discover.textTokens} tokens of text (${discover.resultTokens} with structuredContent) vs ${typical.tokens} direct`,
    );
    if (discover.allTools) {
      const a = discover.allTools;
      console.log(
        `discover_tool answers, all ${a.tools} tools: ${a.text} tokens of text vs ${a.direct} direct (×${a.ratio.toFixed(2)}); pretty-printed ${a.indentedText} (×${(a.indentedText / a.direct).toFixed(2)}); input schemas ${a.schemaForms.indented} indented / ${a.schemaForms.minified} minified / ${a.schemaForms.declared} declared`,
      );
    }

    // Dynamic mode: all 20 lazy; then one load_mcp.
    const { lazyTools, loadMcp } = await inSession(url("lazy"), tokens.lazy!, async (client) => {
      const lazyTools = (await client.listTools()).tools;
      if (!lazyTools.some((t) => t.name === "load_mcp")) return { lazyTools, loadMcp: undefined };
      const loaded = await client.callTool({ name: "load_mcp", arguments: { mcp_name: typicalServer.name } });
      if (loaded.isError) throw new Error(`load_mcp ${typicalServer.name} failed: ${textOf(loaded)}`);
      const after = hostTokens((await client.listTools()).tools);
      const loadMcp: Figures["loadMcp"] = {
        server: typicalServer.name,
        tools: typicalServer.catalog.tools.length,
        directTokens: perServerDirect[typicalServer.name]!,
        textTokens: countTokens(textOf(loaded)),
        resultTokens: countTokens(JSON.stringify(loaded)),
        afterLoadTokens: after,
        afterLoadRatio: after / directTotal,
      };
      return { lazyTools, loadMcp };
    });
    const lazyDescription = lazyTools.find((t) => t.name === "discover_tool")?.description ?? "";
    const dynTokens = hostTokens(lazyTools);
    const words = servers.reduce((n, s) => n + wordCount(s.description), 0) / servers.length;
    const descTokens = servers.reduce((n, s) => n + countTokens(s.description), 0) / servers.length;
    const dynamic: Figures["dynamic"] = {
      complete: lazyTools.some((t) => t.name === "load_mcp") && servers.every((s) => lazyDescription.includes(`\n${s.name}: `)),
      tokens: dynTokens,
      ratio: dynTokens / directTotal,
      goal: DYNAMIC_GOAL,
      met: dynTokens / directTotal <= DYNAMIC_GOAL,
      breakdown: breakdown(lazyTools),
      whatIf: whatIfs(lazyTools, DYNAMIC_EDITS),
      descriptionWords: words,
      descriptionTokens: descTokens,
    };
    console.log(
      `dynamic mode: ${dynTokens} tokens = ${pct(dynamic.ratio)} of direct; goal ≤ ${pct(DYNAMIC_GOAL, 0)}: ${dynamic.met ? "met" : "missed"}` +
        (dynamic.complete ? "" : " (INCOMPLETE: the proxy does not list load_mcp and the lazy servers)"),
    );
    printParts(dynamic.breakdown);
    for (const w of dynamic.whatIf) console.log(`  what if: ${w.change}: ${w.tokens} (${pct(w.tokens / directTotal)}), saves ${w.saved}`);
    if (loadMcp) {
      console.log(
        `load_mcp listing for ${loadMcp.server}: ${loadMcp.textTokens} tokens of text vs ${loadMcp.directTokens} direct; tools/list after it ${loadMcp.afterLoadTokens} = ${pct(loadMcp.afterLoadRatio)} of direct`,
      );
    } else {
      console.log("load_mcp listing: not available (the proxy does not list load_mcp)");
    }

    // Each server alone, config-file mode.
    const perServer: Figures["perServer"] = [];
    for (const name of aloneNames) {
      const s = servers.find((x) => x.name === name)!;
      const tools = await inSession(url(`one-${name}`), tokens[`one-${name}`]!, async (client) => (await client.listTools()).tools);
      const proxyTokens = hostTokens(tools);
      const direct = perServerDirect[name]!;
      perServer.push({ name, file: s.file, tools: s.catalog.tools.length, direct, proxy: proxyTokens, ratio: proxyTokens / direct });
      console.log(`per server ${name}: ${proxyTokens} tokens vs ${direct} direct = ${pct(proxyTokens / direct, 1)}`);
    }
    perServer.sort((a, b) => b.direct - a.direct);

    const figures: Figures = {
      direct: { tokens: directTotal, oneArray, tools: allTools.length, servers: servers.length, readme, perServer: perServerDirect },
      configFile,
      budgeted,
      dynamic,
      perServer,
      discover,
      ...(loadMcp ? { loadMcp } : {}),
      smoke,
    };
    await writeCharts(figures, smoke);
    writeResult("tokens", figures, markdown(figures), smoke);
    if (!smoke) console.log("wrote bench/results/tokens.json, bench/results/tokens.md, bench/charts/tokens.svg, bench/charts/tokens-per-server.svg");
  } finally {
    await teardown({ proxy, snapshot, replay, dir });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Charts and the BENCHMARKS.md section.

export async function writeCharts(f: Figures, smoke: boolean): Promise<void> {
  const rows = [
    { what: `direct: all ${f.direct.tools} tools`, tokens: f.direct.tokens, label: `${f.direct.tokens}` },
    { what: "config-file, 20 eager, whole catalog", tokens: f.configFile.tokens, label: `${f.configFile.tokens} (${pct(f.configFile.ratio, 1)})` },
    ...(f.budgeted
      ? [{ what: `config-file, 20 eager, budget ${f.budgeted.budget}`, tokens: f.budgeted.tokens, label: `${f.budgeted.tokens} (${pct(f.budgeted.ratio, 1)})` }]
      : []),
    { what: "dynamic mode, 20 lazy", tokens: f.dynamic.tokens, label: `${f.dynamic.tokens} (${pct(f.dynamic.ratio, 1)})` },
    ...(f.loadMcp
      ? [{ what: `dynamic, after load_mcp ${f.loadMcp.server}`, tokens: f.loadMcp.afterLoadTokens, label: `${f.loadMcp.afterLoadTokens} (${pct(f.loadMcp.afterLoadRatio, 1)})` }]
      : []),
  ];
  const headline: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "Context tokens at session start, 20 recorded MCP servers (o200k_base)", anchor: "start" },
    width: 480,
    data: { values: rows },
    encoding: {
      y: { field: "what", type: "nominal", sort: rows.map((r) => r.what), title: null, axis: { labelLimit: 260 } },
      x: { field: "tokens", type: "quantitative", title: "tokens in the host's context", scale: { domain: [0, f.direct.tokens * 1.3] } },
    },
    layer: [
      { mark: { type: "bar", color: "#4c78a8" } },
      { mark: { type: "text", align: "left", dx: 4 }, encoding: { text: { field: "label" } } },
    ],
  };
  await writeChart("tokens", headline, smoke);

  const perRows = f.perServer.flatMap((s) => [
    { server: s.name, kind: "direct", tokens: s.direct },
    { server: s.name, kind: "through the proxy", tokens: s.proxy },
  ]);
  const perServer: TopLevelSpec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: "Each server alone: direct vs through the proxy (config-file mode, log scale)", anchor: "start" },
    width: 480,
    height: { step: 11 },
    data: { values: perRows },
    mark: "bar",
    encoding: {
      y: { field: "server", type: "nominal", sort: f.perServer.map((s) => s.name), title: null },
      yOffset: { field: "kind", type: "nominal" },
      // A log scale has no zero: the bars start at 10 tokens.
      x: { field: "tokens", type: "quantitative", scale: { type: "log", domain: [10, 100000] }, title: "tokens", stack: null },
      x2: { datum: 10 },
      color: { field: "kind", type: "nominal", title: null, scale: { range: ["#bab0ac", "#4c78a8"] }, legend: { orient: "bottom" } },
    },
  };
  await writeChart("tokens-per-server", perServer, smoke);
}

function table(head: string[], rows: Array<Array<string | number>>, align?: string[]): string {
  const sep = head.map((_, i) => align?.[i] ?? "---");
  return [head, sep, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

function breakdownTable(parts: Part[], total: number, direct: number): string {
  return table(
    ["part", "tokens", "share", "of direct"],
    [
      ...parts.filter((p) => p.tokens !== 0).map((p) => [p.part, p.tokens, pct(p.tokens / total, 1), pct(p.tokens / direct)]),
      ["**total**", `**${total}**`, "100%", pct(total / direct)],
    ],
    ["---", "--:", "--:", "--:"],
  );
}

function whatIfTable(rows: WhatIf[], direct: number, goal: number): string {
  const limit = Math.floor(direct * goal);
  return table(
    ["change (a suggestion, applied to the measured tools/list)", "saves", "total after", "of direct", `≤ ${pct(goal, 0)}?`],
    rows.map((r) => [r.change, r.saved, r.tokens, pct(r.tokens / direct), r.tokens <= limit ? "yes" : "no"]),
    ["---", "--:", "--:", "--:", "---"],
  );
}

const limitOf = (direct: number, goal: number) => Math.floor(direct * goal);

/** Catalog lines with a sentence end glued to the next word (`in Sentry.Use this tool`). */
function gluedLines(tools: readonly Tool[]): { lines: number; examples: string[] } {
  const lines = (tools.find((t) => t.name === "discover_tool")?.description ?? "")
    .split("\n")
    .filter((l) => l.startsWith("- ") && /[a-z][.!?:][A-Z][a-z]/.test(l));
  return { lines: lines.length, examples: lines.slice(0, 2) };
}

/** Which of the suggested changes would close the gap on their own, or whether only all of them together would. */
function closing(rows: WhatIf[], limit: number): string {
  const singles = rows.slice(0, -1).filter((r) => r.tokens <= limit);
  const all = rows.at(-1)!;
  if (singles.length === 1) return `One change below closes the gap on its own: ${singles[0]!.change}.`;
  if (singles.length > 1) return `${singles.length} of the changes below close the gap on their own; all together leave ${limit - all.tokens} tokens to spare.`;
  if (all.tokens <= limit) return `No single change below closes the gap; all of them together do, with ${limit - all.tokens} tokens to spare.`;
  return `Even all of the changes below together leave it ${all.tokens - limit} tokens over.`;
}

/** Met with so much to spare, or missed by so much, in words. */
function verdict(tokens: number, direct: number, goal: number): string {
  const limit = limitOf(direct, goal);
  return tokens <= limit
    ? `met, ${limit - tokens} tokens under the limit of ${limit}`
    : `missed by ${tokens - limit} tokens (${pct(tokens / direct - goal)} of direct) over the limit of ${limit}`;
}

export function markdown(f: Figures): string {
  const d = f.direct.tokens;
  const cf = f.configFile;
  const dyn = f.dynamic;
  const part = (parts: Part[], needle: string) => parts.find((p) => p.part.includes(needle))?.tokens ?? 0;
  const catalog = part(cf.breakdown, "<tools>");
  const fixed = cf.tokens - catalog;
  const readme = f.direct.readme;
  const disc = f.discover;
  const out: string[] = [];

  out.push(
    "## Context tokens",
    "",
    "What a host puts in its model's context when a session starts: the proxy's whole `tools/list` result, counted as " +
      "`shared/corpus/README.md` counts host tokens (o200k_base on the compact JSON of `{name, description, input_schema}` per " +
      "tool), against exposing every tool of the same 20 recorded servers directly. The proxy runs under `wrangler dev`, each " +
      "corpus server is a replay upstream on loopback (`harness/replay-server.ts`), the host is the SDK `Client`.",
    "",
    table(
      ["what the host holds at session start", "tokens", "of direct", "goal", "verdict"],
      [
        [`direct exposure: ${f.direct.tools} tools of ${f.direct.servers} servers`, d, "100%", "", ""],
        ["config-file mode: 20 servers eager, whole catalog (`catalog_budget` 200,000)", cf.tokens, pct(cf.ratio), `≤ ${pct(cf.goal, 0)}`, `**${verdict(cf.tokens, d, cf.goal)}**`],
        ...(f.budgeted
          ? [[`config-file mode: 20 servers eager, default \`catalog_budget\` (${f.budgeted.budget.toLocaleString("en-US")})`, f.budgeted.tokens, pct(f.budgeted.ratio), `≤ ${f.budgeted.budget}`, `**${f.budgeted.tokens <= f.budgeted.budget ? "met" : "missed"}**`]]
          : []),
        [
          `dynamic mode: 20 servers lazy${dyn.complete ? "" : " (incomplete: the proxy did not list load_mcp)"}`,
          dyn.tokens,
          pct(dyn.ratio),
          `≤ ${pct(dyn.goal, 0)}`,
          `**${verdict(dyn.tokens, d, dyn.goal)}**`,
        ],
        ...(f.loadMcp ? [[`dynamic mode after \`load_mcp\` of ${f.loadMcp.server} (${f.loadMcp.tools} tools)`, f.loadMcp.afterLoadTokens, pct(f.loadMcp.afterLoadRatio), "", ""]] : []),
      ],
      ["---", "--:", "--:", "--:", "---"],
    ),
    "",
    `The direct figure, ${d} tokens (each server's tools as one array, summed over the servers), ` +
      (readme?.hostTokens === d ? `matches the corpus README's total (${readme.hostTokens})` : `differs from the corpus README's total (${readme?.hostTokens ?? "not found"})`) +
      `; all ${f.direct.tools} tools as a single array count ${f.direct.oneArray}.`,
    "",
    "![Context tokens at session start](bench/charts/tokens.svg)",
    "",
  );

  out.push(
    "### Config-file mode",
    "",
    `Every tool keeps its name and a one-line description: ${cf.catalogLines} lines under 20 server headings. The \`<tools>\` ` +
      `catalog is ${catalog} tokens (${(catalog / cf.catalogLines).toFixed(1)} per tool, headings included), ${pct(catalog / d)} of direct ` +
      `on its own; everything else (instructions, \`use_tool\`, both input schemas, names) is ${fixed} tokens, ${pct(fixed / d)}.`,
    "",
    breakdownTable(cf.breakdown, cf.tokens, d),
    "",
    ...(cf.glued.lines
      ? [
          `${cf.glued.lines} of the ${cf.catalogLines} lines glue a sentence end to the next word, e.g. \`${cf.glued.examples[0]}\`: the ` +
            "upstream description's line breaks were deleted rather than folded into spaces, so the first-sentence cut misses " +
            "and the line runs on towards 100 characters. That costs tokens and reads badly; it is a rendering bug, not a design " +
            "limit (the first change below).",
          "",
        ]
      : []),
    cf.met
      ? `The ${pct(cf.goal, 0)} goal is ${verdict(cf.tokens, d, cf.goal)}.`
      : `The ${pct(cf.goal, 0)} goal is ${verdict(cf.tokens, d, cf.goal)}. The \`<tools>\` catalog is ` +
          `${pct(catalog / cf.tokens, 0)} of the total, so that is where the tokens are, and each of its ${cf.catalogLines} lines pays ` +
          "for punctuation that carries no meaning (the `- ` bullet, the final period). " +
          closing(cf.whatIf, limitOf(d, cf.goal)) +
          " None of them drops a tool or its one-line description:",
    "",
    whatIfTable(cf.whatIf, d, cf.goal),
    "",
  );

  const lazyList = part(dyn.breakdown, "<mcp_servers>");
  const dynFixed = dyn.tokens - lazyList;
  out.push(
    "### Dynamic mode",
    "",
    `Each lazy server is one \`name: description\` line under \`<mcp_servers>\`; the descriptions written for this run ` +
      `(\`CORPUS_SERVERS\` in \`bench/tokens.ts\`) average ${dyn.descriptionWords.toFixed(1)} words and ${dyn.descriptionTokens.toFixed(1)} tokens. ` +
      `The list is ${lazyList} tokens, ${pct(lazyList / d)} of direct on its own; the rest, the proxy's own text (two paragraphs of ` +
      `instructions, the \`use_tool\` and \`load_mcp\` descriptions, three input schemas, names), is ${dynFixed} tokens, ${pct(dynFixed / d)}.`,
    "",
    breakdownTable(dyn.breakdown, dyn.tokens, d),
    "",
    dyn.met
      ? `The ${pct(dyn.goal, 0)} goal is ${verdict(dyn.tokens, d, dyn.goal)}: a margin of ${pct((limitOf(d, dyn.goal) - dyn.tokens) / d)} ` +
          `of direct. The server descriptions are the largest part, and they are the team's words: one word more in every ` +
          `description costs about ${((dyn.descriptionTokens / dyn.descriptionWords) * 20).toFixed(0)} tokens, so the margin holds ` +
          `descriptions about ${((limitOf(d, dyn.goal) - dyn.tokens) / ((dyn.descriptionTokens / dyn.descriptionWords) * 20)).toFixed(1)} ` +
          "words longer on average. What the proxy's own text could still give up:"
      : `The ${pct(dyn.goal, 0)} goal is ${verdict(dyn.tokens, d, dyn.goal)}. The server descriptions are the largest part, but ` +
          `they are the team's words, not the proxy's; the proxy's own text (${dynFixed} tokens, ${pct(dynFixed / d)} of direct) is what ` +
          `can shrink. (One word more or less in every description moves the total by about ` +
          `${((dyn.descriptionTokens / dyn.descriptionWords) * 20).toFixed(0)} tokens: descriptions of 25 words, the low end of the ` +
          `issue's range, would save about ${Math.round((dyn.descriptionWords - 25) * (dyn.descriptionTokens / dyn.descriptionWords) * 20)}.) ` +
          closing(dyn.whatIf, limitOf(d, dyn.goal)) +
          " Suggested changes to the proxy's text:",
    "",
    whatIfTable(dyn.whatIf, d, dyn.goal),
    "",
  );

  out.push(
    "### Each server alone",
    "",
    "One team per server in config-file mode: the proxy's `tools/list` against that server's direct tools. The fixed part " +
      `(about ${fixed} tokens) makes the proxy dearer than direct exposure for the smallest servers.`,
    "",
    table(
      ["server", "corpus file", "tools", "direct", "through the proxy", "proxy / direct"],
      f.perServer.map((s) => [s.name, `\`${s.file}\``, s.tools, s.direct, s.proxy, pct(s.ratio, 1)]),
      ["---", "---", "--:", "--:", "--:", "--:"],
    ),
    "",
    "![Each server alone](bench/charts/tokens-per-server.svg)",
    "",
  );

  out.push(
    "### One `discover_tool` answer, one `load_mcp` listing",
    "",
    `The typical tool is the median of all ${f.direct.tools} by direct tokens, \`${disc.tool}\` (${disc.directTokens} tokens as a direct ` +
      `definition). Its \`discover_tool\` answer is ${disc.textTokens} tokens of text; the whole result, whose \`structuredContent\` ` +
      `repeats the definition as JSON, is ${disc.resultTokens} (a host that shows the model only the text pays the first figure). ` +
      `The text carries the input schema as minified JSON, ${disc.indentedSchemaCost} tokens fewer than pretty-printed ` +
      "(`JSON.stringify(schema, null, 2)`) for this tool.",
    "",
  );
  if (disc.allTools) {
    const a = disc.allTools;
    out.push(
      `Over all ${a.tools} tools, the \`discover_tool\` answers cost ${a.text} tokens of text against ${a.direct} for the direct ` +
        `definitions: ×${a.ratio.toFixed(2)} in total, ×${a.medianRatio.toFixed(2)} for the median tool; pretty-printed, as before, the same ` +
        `answers would be ${a.indentedText} tokens (×${(a.indentedText / a.direct).toFixed(2)}). A session that discovers k tools pays the ` +
        "catalog once plus about that much per discovered tool.",
      "",
      table(
        [`the ${a.tools} input schemas as`, "tokens", "of minified"],
        [
          ["pretty-printed JSON", a.schemaForms.indented, pct(a.schemaForms.indented / a.schemaForms.minified)],
          ["**minified JSON (the lookup's form)**", a.schemaForms.minified, "100%"],
          ["the code view's TypeScript declaration", a.schemaForms.declared, pct(a.schemaForms.declared / a.schemaForms.minified)],
        ],
        ["---", "--:", "--:"],
      ),
      "",
      "The lookup keeps JSON: the TypeScript form costs fewer tokens but does not carry the same content (bounds, patterns, " +
        "formats and `not` are dropped), and of two forms with the same content the cheaper one is kept.",
      "",
    );
  }
  if (f.loadMcp) {
    const l = f.loadMcp;
    out.push(
      `\`load_mcp\` of ${l.server} (the median server by direct tokens: ${l.tools} tools, ${l.directTokens} tokens) answers with ` +
        `${l.textTokens} tokens of text (${l.resultTokens} for the whole result, whose \`structuredContent\` repeats the listing). ` +
        `The next \`tools/list\` is ${l.afterLoadTokens} tokens, ${pct(l.afterLoadRatio)} of direct.`,
      "",
    );
  } else {
    out.push("`load_mcp` listing: not measured, the proxy did not offer `load_mcp`.", "");
  }
  return out.join("\n");
}

if (isMain(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
