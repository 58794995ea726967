// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance) against the proxy, from
// both sides, with one `wrangler dev` for everything.
//
// As a server, in single-MCP mode, twice: in front of our fixture upstream (harness/conformance-upstream.ts, baseline
// conformance/expected-failures.yml `server:`) and in front of a real @modelcontextprotocol/server-everything (baseline
// conformance/expected-failures-everything.yml). Starts both upstreams on loopback, provisions through the proxy's
// admin API one team per upstream whose config is that one server, puts a forwarder that adds the team's bearer
// token in front of it (the suite cannot send headers), and runs the suite's server scenarios once per upstream.
//
// As a client: the suite's client `auth/*` scenarios (suites auth, backcompat, draft and extensions) with the proxy's
// OAuth client of its upstreams as the client under test. The suite starts each scenario's MCP server and
// authorization server and runs harness/conformance-auth-client.ts, which makes that server an OAuth upstream of a
// team of its own, walks the admin's connect link and calls the upstream's tool through the proxy (baseline
// conformance/expected-failures.yml `client:`).
//
// Prints a summary of each run and exits non-zero when any run of the suite did.
//
//   npm run conformance                          # everything: both server runs (--suite all), the client auth suites
//   npm run conformance -- --upstream everything # one server run only: fixture or everything (client runs as well)
//   npm run conformance -- --no-client           # the server runs only
//   npm run conformance -- --no-server           # the client auth runs only
//   npm run conformance -- --client auth         # one client suite (auth, backcompat, draft, extensions) or one
//                                                # scenario (--client auth/pre-registration); repeatable
//   npm run conformance -- --scenario ping       # anything else goes to the server suite (then no --suite all, and
//                                                # no client runs unless --client names some)
//   npm run conformance -- --no-parity           # skip the use_tool parity check that follows the fixture's run
//   npm run conformance -- --proxy-log           # print wrangler dev's output (the proxy's log lines) at the end
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
  type ElicitRequest,
  type LoggingMessageNotification,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { provisionByAdmin } from "../harness/clients.ts";
import { startConformanceUpstream, type ConformanceUpstream } from "../harness/conformance-upstream.ts";
import { startHeaderForwarder, type HeaderForwarder } from "../harness/header-forwarder.ts";
import { packageFile, startEverything, startWranglerDev, type Running } from "../harness/processes.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The suite runs 32 short server scenarios in a few seconds; this only stops a hung run (the e2e test's time fits). */
const SUITE_TIMEOUT_MS = 45_000;

/** An upstream the suite runs against, behind a single-MCP team of its own. */
interface Target {
  name: "fixture" | "everything";
  team: string;
  baseline: string;
  /** How the summary names the upstream. */
  title: string;
  start: () => Promise<{ url: string; stop: () => Promise<void> }>;
}

export const TARGETS: readonly Target[] = [
  {
    name: "fixture",
    team: "conformance",
    baseline: join(ROOT, "conformance", "expected-failures.yml"),
    title: "the fixture upstream",
    start: async () => {
      const up: ConformanceUpstream = await startConformanceUpstream();
      return { url: up.url, stop: () => up.close() };
    },
  },
  {
    name: "everything",
    team: "conformance-everything",
    baseline: join(ROOT, "conformance", "expected-failures-everything.yml"),
    title: "server-everything",
    // A scrubbed environment (startEverything's): its get-env tool returns the process environment to any caller.
    start: async () => {
      const up: Running = await startEverything();
      return { url: up.url, stop: () => up.stop() };
    },
  },
];
/**
 * The suite's client suites whose scenarios are all `auth/*`: 14 (auth), 2 (backcompat: 2025-03-26 authorization),
 * 3 (draft) and 3 (extensions). The other client scenarios (initialize, tools_call, sse-retry, elicitation defaults,
 * in the suites core and all) test an MCP host, not an OAuth client, and are not run.
 */
export const CLIENT_SUITES = ["auth", "backcompat", "draft", "extensions"] as const;
/** The client runs' expected failures: the `client:` list of the fixture run's baseline file. */
export const CLIENT_BASELINE = join(ROOT, "conformance", "expected-failures.yml");
/** The command the suite runs as the client of each scenario (the server's URL is appended by the suite). */
const CLIENT_COMMAND = join(ROOT, "harness", "conformance-auth-client.ts");
/**
 * The suite's time-out for one scenario's client command (twice its default). A scenario takes a few seconds, but a
 * suite starts all its scenarios at once, each with a Node process of its own, and on a busy two-core machine the
 * last of them can take over 25 s: the default 30 s cut some short there.
 */
const CLIENT_TIMEOUT_MS = 60_000;
/** The command ends itself this long before the suite would stop it, saying why (its stderr is in the scenario's log). */
const CLIENT_DEADLINE_MS = CLIENT_TIMEOUT_MS - 5_000;
/** One client suite's process: its scenarios run side by side, so a little more than one client time-out. */
const CLIENT_SUITE_TIMEOUT_MS = CLIENT_TIMEOUT_MS + 20_000;

/** One parity call: a broken relay shows as a failed check, not as a run that waits for the upstream time-out. */
const CHECK_TIMEOUT_MS = 10_000;

/** Scenarios that pass on the proxy's own "Unknown tool" answer, not on the upstream tool (see the use_tool parity). */
const PASSES_ON_UNKNOWN_TOOL: Record<string, string> = {
  "tools-call-simple-text": "the suite only wants some text content, and the proxy's isError \"Unknown tool\" answer has text",
  "tools-call-error": "the suite only wants isError with a text, which the proxy's \"Unknown tool\" answer is",
};

interface Check {
  id: string;
  name: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | string;
  description?: string;
  errorMessage?: string;
}

/**
 * One list of a baseline (`server:` or `client:`) with each entry's reason: the group comment above it and the
 * entry's own comment.
 */
export function readBaseline(file: string, list: "server" | "client" = "server"): Map<string, string> {
  const reasons = new Map<string, string>();
  const start = new RegExp(`^${list}:\\s*(#.*)?$`);
  let inList = false;
  let group = "";
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.trimEnd();
    if (/^\S/.test(line) && !line.startsWith("#")) {
      inList = start.test(line);
      group = "";
      continue;
    }
    if (!inList) continue;
    const comment = /^\s+#\s?(.*)$/.exec(line);
    if (comment) {
      // A comment line that starts a group ("(a) …", "(b) …", "(c) …") replaces the group; others continue it.
      group = /^\([a-z]\)/.test(comment[1]!) ? comment[1]! : `${group} ${comment[1]!}`.trim();
      continue;
    }
    const entry = /^\s+-\s+([\w/-]+)\s*(?:#\s?(.*))?$/.exec(line);
    if (entry) reasons.set(entry[1]!, [group, entry[2]].filter(Boolean).join(" — "));
  }
  return reasons;
}

/**
 * checks.json of every scenario the suite wrote under `dir` (its -o), by scenario name. A server run writes one
 * folder per scenario, `<dir>/server-<name>-<time>`; a client run one per `auth/<name>` scenario,
 * `<dir>/auth/<name>-<time>`.
 */
function readResults(dir: string, kind: "server" | "client" = "server"): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  const [parent, pattern, name] =
    kind === "server"
      ? [dir, /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, (m: string) => m]
      : [join(dir, "auth"), /^(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, (m: string) => `auth/${m}`];
  if (!existsSync(parent)) return results;
  for (const folder of readdirSync(parent).sort()) {
    const match = pattern.exec(folder);
    const file = join(parent, folder, "checks.json");
    if (match && existsSync(file)) results.set(name(match[1]!), JSON.parse(readFileSync(file, "utf8")) as Check[]);
  }
  return results;
}

/** The summary's header of a server run (test/e2e/conformance.test.ts finds each run's block by it). */
export const serverTitle = (upstream: string): string => `single-MCP mode, through the proxy, in front of ${upstream}`;
/** The summary's header of the client runs, all suites in one block. */
export const CLIENT_TITLE = "client auth scenarios, the proxy as the OAuth client of the suite's servers";

function summarize(title: string, results: Map<string, Check[]>, baseline: Map<string, string>): string {
  const passed: string[] = [];
  const expected: string[] = [];
  const unexpected: string[] = [];
  const stale: string[] = [];
  for (const [scenario, checks] of results) {
    const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    const listed = baseline.has(scenario);
    if (bad.length === 0 && !listed) passed.push(scenario);
    else if (bad.length === 0) stale.push(scenario);
    else if (listed) expected.push(scenario);
    else unexpected.push(`${scenario}\n${bad.map((c) => `      ${c.status} ${c.name}: ${c.errorMessage || c.description || ""}`).join("\n")}`);
  }
  const lines = ["", `=== dynmcp conformance summary (${title}) ===`];
  lines.push(`passed: ${passed.length}`, ...passed.map((s) => `  ✓ ${s}${PASSES_ON_UNKNOWN_TOOL[s] ? ` (vacuously: ${PASSES_ON_UNKNOWN_TOOL[s]})` : ""}`));
  lines.push(`expected failures: ${expected.length}`, ...expected.map((s) => `  ~ ${s}: ${baseline.get(s)}`));
  if (unexpected.length) lines.push(`UNEXPECTED failures: ${unexpected.length}`, ...unexpected.map((s) => `  ✗ ${s}`));
  if (stale.length) lines.push(`STALE baseline entries (they pass now; remove them): ${stale.length}`, ...stale.map((s) => `  ! ${s}`));
  return lines.join("\n");
}

// ---- use_tool parity ----------------------------------------------------------------------------------------
// The scenarios the baseline lists under (a) call upstream tools by their own names, which a meta-tool proxy cannot
// answer, and two of them (tools-call-simple-text, tools-call-error) pass only because the proxy's "Unknown tool"
// answer is an isError text result. So the same fixtures are called here the way a host behind the proxy calls
// them, through use_tool (and discover_tool for the schema one), with the suite's expectations (stricter where
// the suite is loose). Informational: it is printed and checked by test/e2e/conformance.test.ts, and it does not
// change the exit code, which is the suite's.

interface Parity {
  scenario: string;
  tool: string;
  ok: boolean;
  detail: string;
}

type Content = CallToolResult["content"][number];
const find = (r: CallToolResult, type: string): Content | undefined => r.content.find((c) => c.type === type);
const textOf = (r: CallToolResult): string => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

export async function useToolParity(url: string): Promise<Parity[]> {
  const client = new Client({ name: "dynmcp-conformance-parity", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {} } });
  const logs: LoggingMessageNotification["params"][] = [];
  // A holder, not a plain let: the handlers assign it, which narrowing inside the checks cannot see.
  const host = { sampled: false, properties: undefined as Record<string, Record<string, unknown>> | undefined };
  const elicited = (): Record<string, Record<string, unknown>> => host.properties ?? {};
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    host.sampled = true;
    return { role: "assistant", content: { type: "text", text: "answer from the host" }, model: "parity-model", stopReason: "endTurn" };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const schema = (request.params as ElicitRequest["params"] & { requestedSchema?: { properties?: Record<string, Record<string, unknown>> } }).requestedSchema;
    host.properties = schema?.properties ?? {};
    return { action: "accept", content: {} };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.setLoggingLevel("debug");

  const use = async (tool: string, input: Record<string, unknown> = {}, onprogress?: (p: Progress) => void): Promise<CallToolResult> =>
    (await client.request(
      { method: "tools/call", params: { name: "use_tool", arguments: { tool_name: tool, tool_input: input } } },
      CallToolResultSchema,
      { timeout: CHECK_TIMEOUT_MS, ...(onprogress ? { onprogress } : {}) },
    )) as CallToolResult;

  const cases: Array<[scenario: string, tool: string, check: () => Promise<string | undefined>]> = [
    ["tools-call-simple-text", "test_simple_text", async () => {
      const r = await use("test_simple_text");
      return !r.isError && textOf(r) === "This is a simple text response for testing." ? undefined : `got ${JSON.stringify(r)}`;
    }],
    ["tools-call-image", "test_image_content", async () => {
      const c = find(await use("test_image_content"), "image");
      return c?.type === "image" && c.data && c.mimeType === "image/png" ? undefined : "no image/png content";
    }],
    ["tools-call-audio", "test_audio_content", async () => {
      const c = find(await use("test_audio_content"), "audio");
      return c?.type === "audio" && c.data && c.mimeType === "audio/wav" ? undefined : "no audio/wav content";
    }],
    ["tools-call-embedded-resource", "test_embedded_resource", async () => {
      const c = find(await use("test_embedded_resource"), "resource");
      return c?.type === "resource" && c.resource.uri && c.resource.mimeType && "text" in c.resource ? undefined : "no embedded resource";
    }],
    ["tools-call-mixed-content", "test_multiple_content_types", async () => {
      const r = await use("test_multiple_content_types");
      return ["text", "image", "resource"].every((t) => find(r, t)) ? undefined : `types ${r.content.map((c) => c.type).join(",")}`;
    }],
    ["tools-call-error", "test_error_handling", async () => {
      const r = await use("test_error_handling");
      return r.isError && textOf(r) === "This tool intentionally returns an error for testing" ? undefined : `got ${JSON.stringify(r)}`;
    }],
    ["tools-call-with-logging", "test_tool_with_logging", async () => {
      logs.length = 0;
      await use("test_tool_with_logging");
      await new Promise((r) => setTimeout(r, 200));
      return logs.length >= 3 ? undefined : `${logs.length} log notifications`;
    }],
    ["tools-call-with-progress", "test_tool_with_progress", async () => {
      const seen: number[] = [];
      await use("test_tool_with_progress", {}, (p) => seen.push(p.progress));
      const increasing = seen.every((v, i) => i === 0 || v >= seen[i - 1]!);
      return seen.length >= 3 && increasing ? undefined : `progress ${JSON.stringify(seen)}`;
    }],
    ["tools-call-sampling", "test_sampling", async () => {
      const r = await use("test_sampling", { prompt: "Test prompt for sampling" });
      return host.sampled && textOf(r).includes("answer from the host") ? undefined : `sampling requested: ${host.sampled}; got ${textOf(r)}`;
    }],
    ["tools-call-elicitation", "test_elicitation", async () => {
      host.properties = undefined;
      await use("test_elicitation", { message: "Please provide your information" });
      const props = elicited();
      return "username" in props && "email" in props ? undefined : "no elicitation with username and email";
    }],
    ["elicitation-sep1034-defaults", "test_elicitation_sep1034_defaults", async () => {
      host.properties = undefined;
      await use("test_elicitation_sep1034_defaults");
      const props = elicited();
      const want = { name: "John Doe", age: 30, score: 95.5, status: "active", verified: true } as Record<string, unknown>;
      const wrong = Object.keys(want).filter((k) => props[k]?.default !== want[k]);
      return wrong.length === 0 ? undefined : `defaults missing or changed: ${wrong.join(", ")}`;
    }],
    ["elicitation-sep1330-enums", "test_elicitation_sep1330_enums", async () => {
      host.properties = undefined;
      await use("test_elicitation_sep1330_enums");
      const p = elicited();
      const items = (k: string) => (p[k]?.items ?? {}) as Record<string, unknown>;
      const ok = Array.isArray(p.untitledSingle?.enum) && Array.isArray(p.titledSingle?.oneOf) && Array.isArray(p.legacyEnum?.enumNames) &&
        Array.isArray(items("untitledMulti").enum) && Array.isArray(items("titledMulti").anyOf);
      return ok ? undefined : `enum variants changed: ${JSON.stringify(p)}`;
    }],
    ["json-schema-2020-12", "json_schema_2020_12_tool", async () => {
      const r = await client.callTool({ name: "discover_tool", arguments: { tool_name: "json_schema_2020_12_tool" } }, undefined, { timeout: CHECK_TIMEOUT_MS });
      const schema = ((r.structuredContent ?? {}) as { inputSchema?: Record<string, unknown> }).inputSchema ?? {};
      const ok = schema.$schema === "https://json-schema.org/draft/2020-12/schema" && typeof schema.$defs === "object" &&
        "address" in (schema.$defs as object) && schema.additionalProperties === false;
      return ok ? undefined : `inputSchema ${JSON.stringify(schema)}`;
    }],
    ["server-sse-polling", "test_reconnection", async () => {
      const r = await use("test_reconnection");
      return !r.isError && textOf(r).includes("completed successfully") ? undefined : `got ${JSON.stringify(r)}`;
    }],
  ];

  const results: Parity[] = [];
  try {
    for (const [scenario, tool, check] of cases) {
      const problem = await check().catch((err: unknown) => `threw ${err instanceof Error ? err.message : String(err)}`);
      results.push({ scenario, tool, ok: problem === undefined, detail: problem ?? "" });
    }
  } finally {
    await client.close().catch(() => {});
  }
  return results;
}

function formatParity(results: Parity[]): string {
  const ok = results.filter((r) => r.ok).length;
  const lines = ["", `=== use_tool parity (the tool scenarios through the meta-tools; informational) ===`, `parity: ${ok}/${results.length} ok`];
  for (const r of results) lines.push(`  ${r.ok ? "✓" : "✗"} ${r.scenario} via ${r.tool}${r.ok ? "" : `: ${r.detail}`}`);
  return lines.join("\n");
}

/** The suite's processes while they run (stopped with everything else on Ctrl-C). */
const suiteChildren = new Set<ChildProcess>();

/**
 * Runs the suite's CLI with `args`; its output is echoed as it comes unless `quiet` (runs side by side print theirs
 * when done), and it is stopped after `timeoutMs`.
 */
function runSuite(args: string[], opts: { env?: Record<string, string>; quiet?: boolean; timeoutMs?: number } = {}): Promise<{ code: number; output: string }> {
  const timeoutMs = opts.timeoutMs ?? SUITE_TIMEOUT_MS;
  const cli = packageFile("@modelcontextprotocol/conformance", "dist", "index.js");
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...opts.env } });
    suiteChildren.add(child);
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (!opts.quiet) process.stdout.write(chunk);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    const timer = setTimeout(() => {
      output += `\nconformance suite did not finish in ${timeoutMs} ms; stopped.\n`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.once("exit", (code, signal) => {
      suiteChildren.delete(child);
      clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 1 : 0), output });
    });
  });
}

/** A client run: one of the suite's client suites, or one `auth/*` scenario. */
type ClientRun = { suite: (typeof CLIENT_SUITES)[number] } | { scenario: string };
const clientRunName = (run: ClientRun): string => ("suite" in run ? `suite ${run.suite}` : run.scenario);

/**
 * The client runs against the running proxy, side by side (each suite runs its scenarios side by side too, each
 * with its own servers on loopback and its own team at the proxy). Their output is printed run by run once all are
 * done, then one summary of every scenario against the `client:` baseline.
 */
async function runClientSuites(runs: ClientRun[], proxyUrl: string, adminToken: string, dir: string): Promise<{ code: number; summary: string }> {
  // The suite splits the command at spaces and runs it through a shell: neither path may hold a space.
  for (const path of [process.execPath, CLIENT_COMMAND]) if (/\s/.test(path)) throw new Error(`the client command cannot run from a path with a space: ${path}`);
  const command = `${process.execPath} ${CLIENT_COMMAND}`;
  const env = { DYNMCP_PROXY_URL: proxyUrl, DYNMCP_ADMIN_TOKEN: adminToken, DYNMCP_CLIENT_DEADLINE_MS: String(CLIENT_DEADLINE_MS) };
  const finished = await Promise.all(
    runs.map(async (run, i) => {
      const out = join(dir, `results-client-${i}`);
      const which = "suite" in run ? ["--suite", run.suite] : ["--scenario", run.scenario];
      const args = ["client", "--command", command, ...which, "--timeout", String(CLIENT_TIMEOUT_MS), "--expected-failures", CLIENT_BASELINE, "-o", out];
      const started = performance.now();
      const suite = await runSuite(args, { env, quiet: true, timeoutMs: CLIENT_SUITE_TIMEOUT_MS });
      return { run, out, seconds: (performance.now() - started) / 1000, ...suite };
    }),
  );
  const results = new Map<string, Check[]>();
  let code = 0;
  for (const f of finished) {
    console.log(`\n--- client ${clientRunName(f.run)}: the proxy's upstream OAuth client (${proxyUrl}) against the suite's servers\n`);
    console.log(f.output.trimEnd());
    console.log(`\nconformance suite exit code (client ${clientRunName(f.run)}, ${f.seconds.toFixed(1)} s): ${f.code}`);
    for (const [scenario, checks] of readResults(f.out, "client")) results.set(scenario, checks);
    if (f.code !== 0) code = f.code;
  }
  return { code, summary: summarize(CLIENT_TITLE, results, readBaseline(CLIENT_BASELINE, "client")) };
}

interface Args {
  /** The server runs (none with --no-server). */
  targets: Target[];
  /** The client runs (none with --no-client, or when the server suite's scope was narrowed and no --client given). */
  clients: ClientRun[];
  parity: boolean;
  /** Print what `wrangler dev` printed (the proxy's log lines, its exceptions) at the end. */
  proxyLog: boolean;
  /** What goes to the server suite. */
  suiteArgs: string[];
}

/** The script's own flags, taken out of what goes to the suite. */
function parseArgs(argv: string[]): Args {
  const suiteArgs: string[] = [];
  const chosen = new Set<string>();
  const clients: ClientRun[] = [];
  let server = true;
  let client = true;
  const valueOf = (flag: string, i: number): [string | undefined, number] =>
    argv[i] === flag ? [argv[i + 1], i + 1] : [argv[i]!.slice(flag.length + 1), i];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--no-parity" || arg === "--proxy-log") continue;
    if (arg === "--no-server") {
      server = false;
      continue;
    }
    if (arg === "--no-client") {
      client = false;
      continue;
    }
    if (arg === "--upstream" || arg.startsWith("--upstream=")) {
      const [value, next] = valueOf("--upstream", i);
      i = next;
      if (!TARGETS.some((t) => t.name === value)) throw new Error(`--upstream wants one of ${TARGETS.map((t) => t.name).join(", ")}; got ${value ?? "nothing"}`);
      chosen.add(value!);
      continue;
    }
    if (arg === "--client" || arg.startsWith("--client=")) {
      const [value, next] = valueOf("--client", i);
      i = next;
      if ((CLIENT_SUITES as readonly string[]).includes(value ?? "")) clients.push({ suite: value as (typeof CLIENT_SUITES)[number] });
      else if (/^auth\/[\w.-]+$/.test(value ?? "")) clients.push({ scenario: value! });
      else throw new Error(`--client wants a client suite (${CLIENT_SUITES.join(", ")}) or an auth/* scenario; got ${value ?? "nothing"}`);
      continue;
    }
    suiteArgs.push(arg);
  }
  const targets = !server ? [] : chosen.size === 0 ? [...TARGETS] : TARGETS.filter((t) => chosen.has(t.name));
  // A narrowed server run (--scenario ping) is someone looking at one thing: no client runs unless asked for.
  const narrowed = suiteArgs.some((a) => /^--(scenario|suite)(=|$)/.test(a));
  const defaultClients = narrowed ? [] : CLIENT_SUITES.map((suite) => ({ suite }));
  return { targets, clients: !client ? [] : clients.length > 0 ? clients : defaultClients, parity: !argv.includes("--no-parity"), proxyLog: argv.includes("--proxy-log"), suiteArgs };
}

async function main(): Promise<number> {
  process.chdir(ROOT); // wrangler dev reads ./wrangler.toml
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 2;
  }
  if (args.targets.length === 0 && args.clients.length === 0) {
    console.error("nothing to run: --no-server and --no-client (or a narrowed server run without --client)");
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-conformance-"));
  const upstreams: Array<{ url: string; stop: () => Promise<void> }> = [];
  const forwarders: HeaderForwarder[] = [];
  let proxy: Running | undefined;
  const stopAll = async () => {
    for (const child of suiteChildren) child.kill("SIGKILL");
    await Promise.all(forwarders.map((f) => f.close().catch(() => {})));
    await proxy?.stop().catch(() => {});
    await Promise.all(upstreams.map((u) => u.stop().catch(() => {})));
    rmSync(dir, { recursive: true, force: true });
  };
  let interrupted = false;
  const onSignal = () => {
    interrupted = true;
    void stopAll().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  try {
    // The teams are provisioned through the admin API of this run's proxy (a token of its own): much faster than the
    // team CLI, whose every KV write is a wrangler run. SECRETS_KEY and SESSION_KEY are what the client runs need:
    // upstream accounts and team secrets are sealed under the first, connect links signed with the second.
    const adminToken = randomBytes(24).toString("base64url");
    const vars = { SESSION_KEY: randomBytes(24).toString("base64url"), SECRETS_KEY: randomBytes(32).toString("base64url"), ADMIN_TOKEN: adminToken };
    const starting = startWranglerDev({ persistTo: join(dir, "state"), vars }).then((p) => (proxy = p));
    starting.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled
    // Settled, not all: an upstream that started is stopped at the end even when another failed.
    const settled = await Promise.allSettled(args.targets.map((t) => t.start()));
    for (const s of settled) if (s.status === "fulfilled") upstreams.push(s.value);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
    if (failed) throw failed.reason;
    const running = await starting;
    const tokens = await Promise.all(args.targets.map((t, i) => provisionByAdmin(running.url, adminToken, t.team, { transport: "streamable-http", url: upstreams[i]!.url }, "conformance")));
    const scope = args.suiteArgs.some((a) => a === "--scenario" || a === "--suite" || a.startsWith("--scenario=") || a.startsWith("--suite=")) ? [] : ["--suite", "all"];

    let code = 0;
    for (const [i, target] of args.targets.entries()) {
      const forwarder = await startHeaderForwarder({ target: running.url, token: tokens[i]! });
      forwarders.push(forwarder);
      const url = `${forwarder.url}/t/${target.team}/mcp`;
      console.log(`\n--- ${target.title}: upstream ${upstreams[i]!.url}\nproxy ${running.url}/t/${target.team}/mcp (single-MCP mode)\nsuite → ${url} (forwarder adds the bearer token)\n`);
      const results = join(dir, `results-${target.name}`);
      const suite = await runSuite(["server", "--url", url, ...scope, "--expected-failures", target.baseline, "-o", results, ...args.suiteArgs]);
      if (interrupted) return 130;
      console.log(summarize(serverTitle(target.title), readResults(results), readBaseline(target.baseline)));
      // The parity block calls the fixture's own tools.
      if (args.parity && target.name === "fixture") console.log(formatParity(await useToolParity(url)));
      console.log(`\nconformance suite exit code (${target.title}): ${suite.code}`);
      if (suite.code !== 0) code = suite.code;
    }
    if (args.clients.length > 0) {
      const started = performance.now();
      const client = await runClientSuites(args.clients, running.url, adminToken, dir);
      if (interrupted) return 130;
      console.log(client.summary);
      console.log(`\nconformance suite exit code (client auth runs, ${((performance.now() - started) / 1000).toFixed(1)} s): ${client.code}`);
      if (client.code !== 0) code = client.code;
    }
    return code;
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    if (args.proxyLog && proxy) console.log(`\n=== wrangler dev's output ===\n${proxy.output()}`);
    await stopAll();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main();
}
