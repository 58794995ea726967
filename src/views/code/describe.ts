// The code view's `describe`, in steps: a whole namespace (a lazy one loaded first) answers its index, every method
// named with what it does in a few words, within SERVER_INDEX_TOKENS; method paths answer their TypeScript
// declarations, one `declare const` per namespace, within a size cap past which methods are only named.
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { HostExtra } from "../../relay/bridge.ts";
import { PATH_SEPARATOR } from "../../catalog/code-names.ts";
import { DECLARATION_LIMITS, declareMethod, namespaceDeclaration } from "../../catalog/declarations.ts";
import { namespaceIndex } from "../../catalog/server-index.ts";
import { oneLine, renderUnknownTool } from "../../catalog/render.ts";
import { callerDecides, findTool } from "../find-tool.ts";
import { isResult, parseArgs, toolError } from "../tool-errors.ts";
import type { ExposedTool } from "../../upstream/registry.ts";
import { namespaceList, type CodeContext } from "./code-context.ts";
import { CODE_DESCRIBE } from "./definitions.ts";
import { failureMessage } from "./result.ts";
import { CodeDescribeInput } from "./schemas.ts";

/** Declarations in one describe answer beyond this many characters (about 6,000 tokens) are named, not declared. */
export const DESCRIBE_MAX_CHARS = 24_000;
/** Paths one describe may ask for (separated by commas or spaces). */
export const MAX_DESCRIBED = 20;
/** Said once under a declaration whose descriptions the brief form shortened. */
const SHORTENED_NOTE = "Descriptions ending in … are shortened; describe with full: true gives them whole.";

/** One method as describe declares it. */
interface DeclaredMethod {
  method: string;
  text: string;
  shortened: boolean;
  path: string;
  about: string;
}

/** What describe found for one path: methods' declarations under their namespace, or the whole namespace's index. */
interface Described {
  namespace: string;
  /** The whole namespace was asked for: its index, not its declarations. */
  index?: string | undefined;
  methods: DeclaredMethod[];
}

/** A tool's annotations as doc tags: what an agent should know before calling it from a program. */
function annotationTags(found: ExposedTool, asks: boolean): string[] {
  const a = found.tool.annotations;
  const tags = a?.readOnlyHint === true ? ["@readonly"] : a?.destructiveHint === true ? ["@destructive"] : [];
  return asks ? [...tags, "@needsApproval each call asks the user first"] : tags;
}

/** describe's answer for `raw` (its arguments); one path that found nothing answers as an error. */
export async function describe(context: CodeContext, raw: unknown, host: HostExtra): Promise<CallToolResult> {
  const args = parseArgs(CodeDescribeInput, raw, CODE_DESCRIBE);
  if (isResult(args)) return args;
  const paths = [...new Set(args.path.split(/[\s,]+/).filter((p) => p !== ""))];
  if (paths.length === 0) return toolError("invalid_arguments", `Invalid arguments for ${CODE_DESCRIBE}: path: give a namespace or a namespace.method.`);
  if (paths.length > MAX_DESCRIBED) {
    return toolError("invalid_arguments", `Invalid arguments for ${CODE_DESCRIBE}: path: at most ${MAX_DESCRIBED} paths at once, not ${paths.length}.`);
  }
  const decides = callerDecides(context.session.registry, context.session.subject);
  const declare = (path: string, found: ExposedTool, namespace: string): DeclaredMethod => {
    const method = path.slice(namespace.length + PATH_SEPARATOR.length);
    const one = declareMethod(method, found.tool, { ...DECLARATION_LIMITS, brief: args.full !== true }, annotationTags(found, decides(found).access === "approve"));
    return { method, path, ...one, about: oneLine(found.tool.description) };
  };
  const results = await Promise.all(paths.map((p) => describePath(context, p, declare, host)));
  const found = results.filter((r): r is Described => !isResult(r));
  // Among several paths, the others are answered and one that found nothing gets a line.
  if (found.length === 0) return results[0] as CallToolResult;
  const failures = results.filter(isResult).map((r) => failureMessage(r));
  return describeAnswer(found, failures);
}

/** One path of a describe: a method, or a whole namespace (a lazy one loaded first). */
async function describePath(
  { session: { registry, counter }, names, naming, lazy }: CodeContext,
  path: string,
  declare: (path: string, found: ExposedTool, namespace: string) => DeclaredMethod,
  host: HostExtra,
): Promise<Described | CallToolResult> {
  const parts = names.splitPath(path);
  const namespace = parts?.namespace ?? path;
  const server = names.serverOf(namespace);
  if (server === undefined) {
    if (parts === undefined && !path.includes(PATH_SEPARATOR)) {
      return toolError("unknown_tool", `Unknown namespace "${path}". The namespaces are: ${namespaceList(names)}.`);
    }
    return toolError("unknown_tool", renderUnknownTool(path, names.paths()));
  }
  const failedLoad = await lazy.ensure(server, host);
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
    const methods = names.methodsOf(namespace).map(([p, found]) => ({ name: p.slice(namespace.length + PATH_SEPARATOR.length), description: found.tool.description }));
    return { namespace, methods: [], index: namespaceIndex(namespace, registry.description(server), methods, await counter(), CODE_DESCRIBE) };
  }
  const target = await findTool(registry, naming, path);
  if (isResult(target)) return target;
  // Declared under its method, whichever name it was asked by (the upstream's own is accepted too).
  return { namespace, methods: [declare(names.pathOf(target.exposedName) ?? path, target, namespace)] };
}

/**
 * describe's answer: a namespace asked for whole answers its index; one `declare const` per namespace holds the
 * methods asked for (in the order asked), within DESCRIBE_MAX_CHARS (the methods past it named with their first
 * sentence, to describe one by one), the note on shortened descriptions once, and a line per path that found nothing.
 */
function describeAnswer(found: Described[], failures: string[]): CallToolResult {
  const groups = new Map<string, { index?: string | undefined; methods: DeclaredMethod[] }>();
  for (const d of found) {
    const group = groups.get(d.namespace) ?? { methods: [] };
    group.index ??= d.index;
    for (const m of d.methods) if (!group.methods.some((x) => x.method === m.method)) group.methods.push(m);
    groups.set(d.namespace, group);
  }
  const parts: string[] = [];
  const left: string[] = [];
  let size = 0;
  let shortened = false;
  for (const [namespace, group] of groups) {
    if (group.index !== undefined) parts.push(group.index);
    const declared: string[] = [];
    for (const m of group.methods) {
      if (left.length === 0 && (size === 0 || size + m.text.length <= DESCRIBE_MAX_CHARS)) {
        declared.push(m.text);
        size += m.text.length;
        shortened ||= m.shortened;
      } else left.push(m.about ? `- ${m.path}: ${m.about}` : `- ${m.path}`);
    }
    if (declared.length > 0) parts.push(namespaceDeclaration(namespace, declared));
  }
  if (left.length > 0) parts.push([`${left.length} more methods (describe each by its path):`, ...left].join("\n"));
  if (failures.length > 0) parts.push(failures.join("\n"));
  if (shortened) parts.push(SHORTENED_NOTE);
  return { content: [{ type: "text", text: parts.join("\n\n") }] };
}

