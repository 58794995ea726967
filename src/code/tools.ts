// The code view's tools/list and tools/call (docs/code-mode.md): `search` ranks the team's APIs as discover_tool's
// search does, `describe` answers TypeScript declarations, `execute` runs the agent's program in a sandboxed Dynamic
// Worker (src/code/sandbox.ts) whose every tool call comes back here and goes the way use_tool's does
// (src/meta/call.ts): the same filters, pins, secrets, timeouts, retries, logging and accounting. A lazy server is
// loaded by describe or by a program's first call of one of its methods (the registry's load: coalesced, atomic,
// three failures evict).
import { ProtocolError, ProtocolErrorCode, inputRequired, type CallToolResult, type InputRequiredResult, type RequestStateCodec, type Server, type Tool } from "@modelcontextprotocol/server";
import { log } from "../log.ts";
import { hostSignal, type HostBridge, type HostExtra } from "../forward/bridge.ts";
import { PATH_SEPARATOR } from "../catalog/code-names.ts";
import { DECLARATION_LIMITS, declareMethod, namespaceDeclaration } from "../catalog/declarations.ts";
import { oneLine, renderUnknownTool } from "../catalog/render.ts";
import type { TokenCounter } from "../catalog/tokenizer.ts";
import { callFoundTool, findTool, isResult, toolError, type SessionIdentity, type ToolResultLinks } from "../meta/call.ts";
import { LazyLoads } from "../meta/lazy-loads.ts";
import { searchLazyServers } from "../meta/server-search.ts";
import { searchCatalog } from "../meta/tool-search.ts";
import { parseArgs, type UsageRecorder } from "../meta/tools.ts";
import type { ExposedTool, UpstreamRegistry } from "../upstream/registry.ts";
import { CODE_DESCRIBE, CODE_EXECUTE, CODE_SEARCH, codeDefinitions, fitCodeDefinitions } from "./definitions.ts";
import { CodeNames } from "./names.ts";
import { failureMessage, programValue, runAnswer } from "./result.ts";
import { runProgram, type Sandbox } from "./sandbox.ts";
import type { SandboxLimits, ToolCall } from "./run-state.ts";
import { RunConsent, allows, canAsk, consentQuestion, programHash, markAsked, resumable, waitingRun, type Pause, type PausedRuns } from "./consent.ts";
import { declaredCapabilities, type ParkState } from "../modern/request-state.ts";
import { needsApproval } from "./approval.ts";
import type { ApprovalRule } from "../config/validate.ts";
import { CodeDescribeInput, CodeExecuteInput, CodeSearchInput } from "./schemas.ts";

/** At most this many servers not loaded yet come with a search's answer. */
const LAZY_HITS = 3;
/**
 * Programs one session may run at once. A Durable Object may have 10 Dynamic Workers with requests in flight
 * (Cloudflare's documented limit); a few per session leaves room for a program still winding down after its deadline.
 */
export const MAX_CONCURRENT_RUNS = 4;
/** Declarations in one describe answer beyond this many characters (about 6,000 tokens) are named, not declared. */
export const DESCRIBE_MAX_CHARS = 24_000;
/** Paths one describe may ask for (separated by commas or spaces). */
export const MAX_DESCRIBED = 20;

/** What the code view needs of the deployment: the loader of sandboxes, their checkpoint finder, the limits of one run. */
export interface CodeRuntime extends Sandbox {
  limits: SandboxLimits;
}

/** A tool's annotations as doc tags: what an agent should know before calling it from a program. */
function annotationTags(found: ExposedTool, rule: ApprovalRule | undefined): string[] {
  const a = found.tool.annotations;
  const tags = a?.readOnlyHint === true ? ["@readonly"] : a?.destructiveHint === true ? ["@destructive"] : [];
  return needsApproval(rule, found) ? [...tags, "@needsApproval each call asks the user first"] : tags;
}

/** The key of the consent question in a 2026 `input_required` round of execute. */
const CONSENT_INPUT = "consent";

/**
 * Consent rounds one execute asks at most; past them the run answers with its `approve` id instead, so a host whose
 * SDK stops after a number of rounds (the v2 SDK's default is 10) never loses the paused run.
 */
export const MAX_CONSENT_ROUNDS = 8;

/** Said once under a declaration whose descriptions the brief form shortened. */
const SHORTENED_NOTE = "Descriptions ending in … are shortened; describe with full: true gives them whole.";

/** The namespaces, for answers that need to name them. */
const namespaceList = (names: CodeNames): string => names.namespaces().join(", ") || "none";

/** What the session lends the code view besides the registry: the token counter, resource links, the usage meter. */
export interface CodeSessionParts {
  counter: () => Promise<TokenCounter>;
  /** Where programs paused for the user's consent wait (the session's storage). */
  paused: PausedRuns;
  /** The team's rule of which calls from a program need the user's consent. */
  approve?: ApprovalRule | undefined;
  links?: ToolResultLinks | undefined;
  meter?: UsageRecorder | undefined;
}

/** Registers the code view's tools/list and tools/call on a 2025 session's server. */
export function registerCodeTools(
  server: Server,
  registry: UpstreamRegistry,
  bridge: HostBridge,
  who: SessionIdentity,
  runtime: CodeRuntime,
  parts: CodeSessionParts,
): void {
  codeTools(registry, bridge, who, runtime, parts, { ask: true })(server);
}

/**
 * The code view over one registry: its state (namespaces, running programs, the fitted list) lives as long as the
 * registry, and the returned function registers its handlers on a server (a 2025 session's one server, or each
 * request's server in a 2026-era object). `ask`: whether a call that needs consent may ask the host by elicitation
 * on the execute request (a 2025 session whose host declared it). `rounds` (a 2026-era object): a host whose request
 * declares elicitation is asked in an `input_required` round instead, the paused run named by the signed
 * requestState and resumed with the answer. Otherwise the run pauses for `approve`.
 */
export function codeTools(
  registry: UpstreamRegistry,
  bridge: HostBridge,
  who: SessionIdentity,
  runtime: CodeRuntime,
  { counter, links, meter, paused, approve: rule }: CodeSessionParts,
  { ask, rounds }: { ask: boolean; rounds?: RequestStateCodec<ParkState> | undefined },
): (server: Server) => void {
  const names = new CodeNames(registry);
  const naming = names.toolNames();
  const lazy = new LazyLoads(registry, bridge, who);
  const namespaces = names.namespaces().map((namespace) => ({ namespace, description: registry.description(names.serverOf(namespace)!) }));
  let running = 0;
  /** The list fitted to the budget, with what it costs (once: it never changes); unfitted if the counter fails. */
  let listed: Promise<{ tools: Tool[]; tokens?: number }> | undefined;

  const list = async () => {
    // Fixed by the config: the servers come in as programs call them, without changing this list.
    registry.retryFailed();
    listed ??= counter().then(
      (count) => fitCodeDefinitions(namespaces, registry.catalogBudget, count),
      (err: unknown) => {
        // The tokenizer's table is a static asset: without it the list is the whole one, said once per try.
        log({ event: "misconfigured", reason: `code view: no token counter, tools/list not fitted to the budget (${err instanceof Error ? err.message : String(err)})` });
        listed = undefined;
        return { tools: codeDefinitions(namespaces) };
      },
    );
    const { tools, tokens } = await listed;
    if (meter && tokens !== undefined) meter.listed({ description: JSON.stringify(tools), tokens });
    return { tools };
  };

  const search = async (raw: unknown): Promise<CallToolResult> => {
    const args = parseArgs(CodeSearchInput, raw, CODE_SEARCH);
    if (isResult(args)) return args;
    await registry.ensureEager();
    let only: string | undefined;
    if (args.server !== undefined) {
      only = names.serverOf(args.server) ?? (names.namespaceOf(args.server) === undefined ? undefined : args.server);
      if (only === undefined || !registry.ready().some((u) => u.name === only)) {
        const loaded = registry.ready().map((u) => names.namespaceOf(u.name)!);
        return toolError("invalid_arguments", `No loaded namespace is named "${args.server}"; loaded: ${loaded.length ? loaded.join(", ") : "none"}.`);
      }
    }
    const hits = searchCatalog(registry, args.query, { limit: args.limit, server: only }).flatMap((hit) => {
      const path = names.pathOf(hit.name);
      return path === undefined ? [] : [{ path, description: hit.description }];
    });
    const servers = only === undefined ? searchLazyServers(registry, args.query, LAZY_HITS) : [];
    const line = (name: string, description: string) => (description ? `${name}: ${description}` : name);
    const parts = [
      hits.length === 0
        ? `No loaded API matches "${oneLine(args.query)}": try other words, or a namespace execute's description names.`
        : hits.map((h) => line(h.path, h.description)).join("\n"),
    ];
    if (servers.length > 0) {
      parts.push(
        ["Namespaces not loaded yet that match (describe one, or call it from a program, to load it):",
          ...servers.map((s) => line(names.namespaceOf(s.name) ?? s.name, s.description))].join("\n"),
      );
    }
    return { content: [{ type: "text", text: parts.join("\n\n") }] };
  };

  /** What describe found for one path: methods' declarations under their namespace, or the failure to answer. */
  interface Described {
    namespace: string;
    server: string;
    /** The whole namespace was asked for (its description heads it, and the methods past the size cap are named). */
    whole: boolean;
    methods: Array<{ method: string; text: string; shortened: boolean; path: string; about: string }>;
  }

  const declare = (path: string, found: ExposedTool, namespace: string, full: boolean) => {
    const method = path.slice(namespace.length + PATH_SEPARATOR.length);
    const one = declareMethod(method, found.tool, { ...DECLARATION_LIMITS, brief: !full }, annotationTags(found, rule));
    return { method, path, ...one, about: oneLine(found.tool.description) };
  };

  /** One path of a describe: a method, or a whole namespace (a lazy one loaded first). */
  const describePath = async (path: string, full: boolean, extra: HostExtra): Promise<Described | CallToolResult> => {
    const parts = names.splitPath(path);
    const namespace = parts?.namespace ?? path;
    const server = names.serverOf(namespace);
    if (server === undefined) {
      if (parts === undefined && !path.includes(PATH_SEPARATOR)) {
        return toolError("unknown_tool", `Unknown namespace "${path}". The namespaces are: ${namespaceList(names)}.`);
      }
      return toolError("unknown_tool", renderUnknownTool(path, names.paths()));
    }
    const failedLoad = await lazy.ensure(server, extra);
    if (failedLoad) return failedLoad;
    if (parts === undefined) {
      await registry.ensureEager();
      const reason = registry.unavailable(server);
      if (reason !== undefined && names.methodsOf(namespace).length === 0) {
        await registry.retryNow(server);
        if (names.methodsOf(namespace).length === 0) {
          return toolError("unavailable", `The server "${server}" is unavailable in this session (${oneLine(registry.unavailable(server) ?? reason)}).`, server);
        }
      }
      return { namespace, server, whole: true, methods: names.methodsOf(namespace).map(([p, found]) => declare(p, found, namespace, full)) };
    }
    const target = await findTool(registry, naming, path);
    if (isResult(target)) return target;
    // Declared under its method, whichever name it was asked by (the upstream's own is accepted too).
    return { namespace, server, whole: false, methods: [declare(names.pathOf(target.exposedName) ?? path, target, namespace, full)] };
  };

  /**
   * describe's answer: one `declare const` per namespace with the methods asked for (in the order asked), within
   * DESCRIBE_MAX_CHARS (the methods past it named with their first sentence, to describe one by one), the note on
   * shortened descriptions once, and a line per path that found nothing.
   */
  const describeAnswer = (found: Described[], failures: string[]): CallToolResult => {
    const groups = new Map<string, { server: string; whole: boolean; methods: Described["methods"] }>();
    for (const d of found) {
      const group = groups.get(d.namespace) ?? { server: d.server, whole: false, methods: [] };
      group.whole ||= d.whole;
      for (const m of d.methods) if (!group.methods.some((x) => x.method === m.method)) group.methods.push(m);
      groups.set(d.namespace, group);
    }
    const parts: string[] = [];
    const left: string[] = [];
    let size = 0;
    let shortened = false;
    for (const [namespace, group] of groups) {
      const declared: string[] = [];
      for (const m of group.methods) {
        if (left.length === 0 && (size === 0 || size + m.text.length <= DESCRIBE_MAX_CHARS)) {
          declared.push(m.text);
          size += m.text.length;
          shortened ||= m.shortened;
        } else left.push(m.about ? `- ${m.path}: ${m.about}` : `- ${m.path}`);
      }
      if (declared.length > 0) parts.push(namespaceDeclaration(namespace, declared, group.whole ? registry.description(group.server) : undefined));
      else if (group.methods.length === 0) parts.push(`The server "${group.server}" offers no tools in this session.`);
    }
    if (left.length > 0) parts.push([`${left.length} more methods (describe each by its path):`, ...left].join("\n"));
    if (failures.length > 0) parts.push(failures.join("\n"));
    if (shortened) parts.push(SHORTENED_NOTE);
    return { content: [{ type: "text", text: parts.join("\n\n") }] };
  };

  const describe = async (raw: unknown, extra: HostExtra): Promise<CallToolResult> => {
    const args = parseArgs(CodeDescribeInput, raw, CODE_DESCRIBE);
    if (isResult(args)) return args;
    const paths = [...new Set(args.path.split(/[\s,]+/).filter((p) => p !== ""))];
    if (paths.length === 0) return toolError("invalid_arguments", `Invalid arguments for ${CODE_DESCRIBE}: path: give a namespace or a namespace.method.`);
    if (paths.length > MAX_DESCRIBED) {
      return toolError("invalid_arguments", `Invalid arguments for ${CODE_DESCRIBE}: path: at most ${MAX_DESCRIBED} paths at once, not ${paths.length}.`);
    }
    const results = await Promise.all(paths.map((p) => describePath(p, args.full === true, extra)));
    const found = results.filter((r): r is Described => !isResult(r));
    // One path that found nothing answers as an error; among several, the others are answered and it gets a line.
    if (found.length === 0) return results[0] as CallToolResult;
    const failures = results.filter(isResult).map((r) => failureMessage(r));
    return describeAnswer(found, failures);
  };

  const execute = async (raw: unknown, extra: HostExtra): Promise<CallToolResult | InputRequiredResult> => {
    const args = parseArgs(CodeExecuteInput, raw, CODE_EXECUTE);
    if (isResult(args)) return args;
    if (running >= MAX_CONCURRENT_RUNS) {
      return toolError("program_failed", `This session already runs ${running} programs, the most it may run at once; wait for one to finish.`, undefined, { cause: "busy" });
    }
    // Counted before the first await: requests interleave there, and each must see the others' runs.
    running++;
    try {
      return await executeCounted(args, extra);
    } finally {
      running--;
    }
  };

  /** One execute within the session's cap on runs at once (the caller counts it). */
  const executeCounted = async (args: { code: string; approve?: string | undefined }, extra: HostExtra): Promise<CallToolResult | InputRequiredResult> => {
    const codeHash = await programHash(args.code);
    // A 2026 host's answer to a consent question: its requestState names the paused run (and wins over an `approve`
    // given beside it), its answer says yes or no.
    const answered = rounds === undefined ? undefined : extra.mcpReq.requestState<ParkState>();
    if (answered !== undefined && (typeof answered !== "object" || answered.t !== CODE_EXECUTE || answered.d !== codeHash || answered.p === undefined)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, "This requestState belongs to another call: retry execute with the same code.");
    }
    const answer = extra.mcpReq.inputResponses?.[CONSENT_INPUT] as { action?: unknown; content?: unknown } | undefined;
    if (answered?.p !== undefined && rounds !== undefined && answer === undefined) {
      // A retry without the answer (the user was never asked): ask again, the paused run left as it is.
      const waiting = await waitingRun(paused, answered.p, codeHash);
      if (typeof waiting !== "string") return consentRound(rounds, extra, codeHash, { id: answered.p, ...waiting.pending }, answered.r ?? 1);
    }
    const resumeId = answered?.p ?? args.approve;
    const resume = resumeId === undefined ? undefined : await resumable(paused, resumeId, codeHash, answered?.p !== undefined ? "round" : "approve");
    if (typeof resume === "string") return toolError("program_failed", resume, undefined, { cause: "approval" });
    // Anything but an explicit yes (a decline, a cancel) is a no, as a question on a 2025 request's stream is.
    const denied = answered !== undefined && !allows(answer);
    const consent = new RunConsent({ rule, extra, canAsk: ask && canAsk(bridge.capabilities()), paused, codeHash, resume, denied });
    /**
     * A call from the program: the tool resolved first (a lazy server loaded, an eager one still connecting waited
     * for or tried again, as use_tool does), consent decided on that tool, then exactly that tool called.
     */
    const call: ToolCall = (namespace, method, input, signal, hold) => {
      const path = `${namespace}${PATH_SEPARATOR}${method}`;
      const server = names.serverOf(namespace);
      const find = async (): Promise<ExposedTool> => {
        registry.retryFailed();
        if (server !== undefined && names.find(path) === undefined) {
          const failedLoad = await lazy.ensure(server, extra);
          if (failedLoad) throw new Error(failureMessage(failedLoad));
        }
        const target = await findTool(registry, naming, path);
        if (isResult(target)) throw new Error(failureMessage(target));
        return target;
      };
      const make = async (target: ExposedTool): Promise<{ value: unknown } | { error: string }> => {
        const result = await callFoundTool({ registry, bridge, who, links }, target, path, input, undefined, extra, signal);
        meter?.called("tool");
        return result.isError ? { error: failureMessage(result) } : { value: programValue(result) };
      };
      return consent.call(path, input, signal, hold, find, make);
    };
    const started = Date.now();
    const report = await runProgram(runtime, args.code, names.namespaces(), call, runtime.limits, hostSignal(extra));
    log({ event: "execute", ...who, ms: Date.now() - started, calls: report.calls.length, outcome: report.ok ? "ok" : (report.failure?.cause ?? "failed") });
    // A name that is no namespace: say which there are (an unknown method already got the closest paths).
    const undefinedName = report.failure?.cause === "error" ? /^ReferenceError: (\S+) is not defined$/.exec(report.failure.message)?.[1] : undefined;
    const hint = undefinedName !== undefined && names.serverOf(undefinedName) === undefined ? ` (the namespaces are: ${namespaceList(names)})` : "";
    const pause = consent.paused;
    const round = (answered?.r ?? 0) + 1;
    if (rounds !== undefined && pause !== undefined && report.failure?.cause === "approval" && canAsk(declaredCapabilities(extra) ?? {}) && round <= MAX_CONSENT_ROUNDS) {
      // The user is asked in this round; the retry with their answer resumes the run (src/code/consent.ts).
      return consentRound(rounds, extra, codeHash, pause, round);
    }
    return runAnswer(report, hint);
  };

  /**
   * A 2026 round asking the user about the call a paused run waits at; its state names the run and the round. The
   * run is marked first: from now on only the answer resumes it (the state is signed, not secret, and names it).
   */
  const consentRound = async (codec: RequestStateCodec<ParkState>, extra: HostExtra, codeHash: string, pause: Pause, round: number): Promise<InputRequiredResult> => {
    await markAsked(paused, pause.id);
    return inputRequired({
      inputRequests: { [CONSENT_INPUT]: inputRequired.elicit(consentQuestion(pause.path, pause.args)) },
      requestState: await codec.mint({ t: CODE_EXECUTE, d: codeHash, p: pause.id, r: round }, extra),
    });
  };

  return (server) => {
    server.setRequestHandler("tools/list", list);
    server.setRequestHandler("tools/call", (request, extra) => callTool(request.params, extra));
  };

  async function callTool({ name, arguments: raw }: { name: string; arguments?: Record<string, unknown> | undefined }, extra: HostExtra): Promise<CallToolResult | InputRequiredResult> {
    registry.retryFailed();
    const answer = <R extends CallToolResult | InputRequiredResult>(kind: "search" | "lookup" | "execute", result: R): R => {
      // A consent question (input_required) has no text for the model: it counts as a run with an empty answer.
      const content = "content" in result && Array.isArray(result.content) ? (result.content as CallToolResult["content"]) : [];
      meter?.called(kind, content.map((c) => (c.type === "text" ? c.text : "")).join(""));
      return result;
    };
    switch (name) {
      case CODE_SEARCH:
        return answer("search", await search(raw));
      case CODE_DESCRIBE:
        return answer("lookup", await describe(raw, extra));
      case CODE_EXECUTE:
        return answer("execute", await execute(raw, extra));
      default:
        return toolError("unknown_tool", `Unknown tool: "${name}". This server offers ${CODE_SEARCH}, ${CODE_DESCRIBE} and ${CODE_EXECUTE}; upstream tools are called from ${CODE_EXECUTE}'s program.`);
    }
  }
}
