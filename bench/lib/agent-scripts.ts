// The agent-path benchmark's scripted agent (bench/agent-path.ts), one policy per view, following only what the
// answers say (the policy is written out in agent-path.ts's header and in its BENCHMARKS.md section). It reads a
// task's prompt, its steps' requests and the values the user gave, never the expected tools.
import type { AgentHost } from "./agent-hosts.ts";
import { buildArguments } from "./agent-arguments.ts";
import {
  catalogLazyServers,
  catalogToolServers,
  executeNamespaces,
  fieldsOfDeclaration,
  fieldsOfLookup,
  hintedCall,
  namedServers,
  offeredServers,
  searchHits,
  searchPaths,
  toolsetHandle,
  type Answer,
} from "./agent-reading.ts";
import type { AgentTask, TaskStep } from "./agent-tasks.ts";

const META_TOOLS = ["discover_tool", "use_tool", "load_mcp"];

/** The server a step is about: one its words name, else the one the prompt names (none when it names several). */
function serverOf(task: AgentTask, step: TaskStep, known: readonly string[]): string | undefined {
  const inStep = namedServers(step.ask, known);
  if (inStep.length > 0) return inStep[0];
  const inPrompt = namedServers(task.prompt, known);
  return inPrompt.length === 1 ? inPrompt[0] : undefined;
}

/** What the agent noted on its way: the tool it chose per step, and why a step went nowhere. */
export type Notes = string[];

/** Servers the meta view's catalog names: the lazy ones and every `server/` of its tools. */
function catalogServers(description: string): { lazy: Set<string>; all: string[] } {
  const lazy = new Set(catalogLazyServers(description));
  return { lazy, all: [...new Set([...lazy, ...catalogToolServers(description)])] };
}

/**
 * The meta view: a named lazy server is loaded first; `discover_tool {query}` (narrowed to the server the request
 * names); a lazy server the answer offers that the prompt names is loaded and searched; the top hit's schema by
 * `discover_tool {tool_name}`; `use_tool` with arguments built from it. An error's hint naming a call is followed
 * once. In the 2026 era every call after a load carries the toolset handle the load answered.
 */
export async function metaAgent(host: AgentHost, task: AgentTask): Promise<Notes> {
  const notes: Notes = [];
  const catalog = catalogServers(host.tools.find((t) => t.name === "discover_tool")?.description ?? "");
  if (process.env["AGENT_DEBUG"]) notes.push(`catalog: ${host.tools.find((t) => t.name === "discover_tool")?.description}`);
  const loaded = new Set<string>();
  let toolset: string | undefined;
  const withToolset = (args: Record<string, unknown>) => (toolset === undefined ? args : { ...args, toolset });
  const call = async (name: string, args: Record<string, unknown>): Promise<Answer> => {
    const answer = await host.call(name, withToolset(args));
    if (name === "load_mcp") {
      toolset = toolsetHandle(answer) ?? toolset;
      if (!answer.isError && typeof args["mcp_name"] === "string") loaded.add(args["mcp_name"]);
    }
    return answer;
  };
  /** Calls `name`; when that leaves the agent stuck (an error, by default) and the text names a call, makes that call and then this one again. */
  const callFollowing = async (name: string, args: Record<string, unknown>, stuck = (a: Answer) => a.isError): Promise<Answer> => {
    const answer = await call(name, args);
    const hint = stuck(answer) ? hintedCall(answer, META_TOOLS) : undefined;
    if (hint === undefined) return answer;
    notes.push(`followed: ${hint.name} ${JSON.stringify(hint.arguments)}`);
    const { toolset: handle, ...rest } = hint.arguments;
    if (typeof handle === "string") toolset = handle;
    const followed = await call(hint.name, rest);
    return hint.name === name ? followed : call(name, args);
  };
  const load = (server: string) => (loaded.has(server) ? undefined : call("load_mcp", { mcp_name: server }));
  for (const step of task.steps) {
    const where = serverOf(task, step, catalog.all);
    if (where !== undefined && catalog.lazy.has(where)) await load(where);
    // A search that found nothing is as stuck as an error: an answer that says how to go on is followed.
    const nothing = (a: Answer) => a.isError || searchHits(a).length === 0;
    const search = (server?: string) => callFollowing("discover_tool", { query: step.ask, ...(server === undefined ? {} : { server }) }, nothing);
    let found = await search(where);
    const offered = offeredServers(found).filter((s) => namedServers(task.prompt, [s]).length > 0 && !loaded.has(s));
    if (offered.length > 0) {
      await load(offered[0]!);
      found = await search(offered[0]);
    }
    const top = searchHits(found)[0];
    if (top === undefined) {
      notes.push(`"${step.ask}": no hit (${found.text.slice(0, 160)})`);
      continue;
    }
    const lookup = await callFollowing("discover_tool", { tool_name: top });
    const args = buildArguments(fieldsOfLookup(lookup), task.given, step.ask);
    notes.push(`"${step.ask}" → ${top} ${JSON.stringify(args)}`);
    const used = await callFollowing("use_tool", { tool_name: top, tool_input: args });
    if (used.isError) notes.push(`${top} answered an error: ${used.text.slice(0, 200)}`);
  }
  return notes;
}

/**
 * The code view: `search {query}` (narrowed to the namespace the request names: that loads a lazy one), a lazy
 * namespace the answer offers that the prompt names searched by name; `describe` of the top path; arguments built
 * from its declaration; then one `execute` of a program making every step's call in order.
 */
export async function codeAgent(host: AgentHost, task: AgentTask): Promise<Notes> {
  const notes: Notes = [];
  const namespaces = executeNamespaces(host.tools.find((t) => t.name === "execute")?.description ?? "");
  if (process.env["AGENT_DEBUG"]) notes.push(`execute: ${host.tools.find((t) => t.name === "execute")?.description}`);
  const calls: Array<{ path: string; args: Record<string, unknown> }> = [];
  for (const step of task.steps) {
    const where = serverOf(task, step, namespaces);
    const search = (server?: string) => host.call("search", { query: step.ask, ...(server === undefined ? {} : { server }) });
    let found = await search(where);
    if (found.isError && where !== undefined) {
      notes.push(`search in ${where}: ${found.text.slice(0, 160)}`);
      found = await search();
    }
    const offered = offeredServers(found).filter((s) => namedServers(task.prompt, [s]).length > 0);
    let searchedIn = where;
    if (offered.length > 0 && offered[0] !== where) found = await search((searchedIn = offered[0]));
    // Nothing found, and the answer says which search to make instead: that one.
    const hint = searchPaths(found, searchedIn).length === 0 ? hintedCall(found, ["search"]) : undefined;
    if (hint !== undefined) {
      notes.push(`followed: search ${JSON.stringify(hint.arguments)}`);
      found = await host.call("search", hint.arguments);
      searchedIn = typeof hint.arguments["server"] === "string" ? hint.arguments["server"] : undefined;
    }
    const top = searchPaths(found, searchedIn)[0];
    if (top === undefined) {
      notes.push(`"${step.ask}": no hit (${found.text.slice(0, 160)})`);
      continue;
    }
    const described = await host.call("describe", { path: top });
    const method = top.slice(top.indexOf(".") + 1);
    const args = buildArguments(fieldsOfDeclaration(described.text, method), task.given, step.ask);
    notes.push(`"${step.ask}" → ${top} ${JSON.stringify(args)}`);
    calls.push({ path: top, args });
  }
  if (calls.length === 0) return notes;
  const program = [
    "const results = [];",
    ...calls.map((c) => `try { results.push(await ${c.path}(${JSON.stringify(c.args)})); } catch (e) { results.push(String(e?.message ?? e)); }`),
    "return results;",
  ].join("\n");
  const ran = await host.call("execute", { code: program });
  if (ran.isError) notes.push(`execute answered an error: ${ran.text.slice(0, 200)}`);
  return notes;
}
