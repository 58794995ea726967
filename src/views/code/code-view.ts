// The code view (docs/code-mode.md), written once for both eras: `search` ranks the team's APIs as discover_tool's
// search does (src/views/code/code-search.ts), `describe` answers TypeScript declarations (src/views/code/describe.ts), `execute`
// runs the agent's program in a sandbox whose every tool call goes through the one call function
// (src/views/code/execute.ts): the same filters, pins, secrets, timeouts, retries, logging and accounting as use_tool's. A
// lazy server is loaded by describe or by a program's first call of one of its methods. Its state (namespaces, running
// programs, the fitted list) lives as long as the registry; the era's adapter calls it per request.
import type { Tool } from "@modelcontextprotocol/server";
import { log } from "../../lib/log.ts";
import type { InputPort } from "../input-port.ts";
import { LazyLoads } from "../lazy-loads.ts";
import { toolError } from "../tool-errors.ts";
import { answerText, type MetaCallKind, type ToolAnswer, type ToolListAnswer, type ToolView, type ViewSession } from "../tool-view.ts";
import type { CodeContext, CodeRuntime, CodeSessionParts } from "./code-context.ts";
import { codeSearch } from "./code-search.ts";
import { CODE_DESCRIBE, CODE_EXECUTE, CODE_SEARCH, codeDefinitions, fitCodeDefinitions, type NamespaceLine } from "./definitions.ts";
import { describe } from "./describe.ts";
import { Execute } from "./execute.ts";
import { CodeNames } from "./names.ts";

/** The code view over one registry, asking the host through `rounds` (the era's input port). */
export function codeView(session: ViewSession, runtime: CodeRuntime, parts: CodeSessionParts, rounds: InputPort): ToolView {
  const { registry, bridge, who, meter } = session;
  const names = new CodeNames(registry);
  const context: CodeContext = { session, names, naming: names.toolNames(), lazy: new LazyLoads(registry, bridge, who) };
  const namespaces = names.namespaces().map((namespace) => ({ namespace, description: registry.description(names.serverOf(namespace)!) }));
  const list = fittedList(session, namespaces);
  const execute = new Execute(context, runtime, parts, rounds);
  /** Each answer is told to the meter: a consent question (input_required) has no text and counts as a run with an empty answer. */
  const metered = (kind: MetaCallKind, answer: ToolAnswer): ToolAnswer => {
    meter?.called(kind, answerText(answer));
    return answer;
  };
  return {
    list: () => {
      // Fixed by the config: the servers come in as programs call them, without changing this list.
      registry.retryFailed();
      return list();
    },
    call: async ({ name, arguments: raw }, host) => {
      registry.retryFailed();
      switch (name) {
        case CODE_SEARCH:
          return metered("search", await codeSearch(context, raw, host));
        case CODE_DESCRIBE:
          return metered("lookup", await describe(context, raw, host));
        case CODE_EXECUTE:
          return metered("execute", await execute.answer(raw, host));
        default:
          return toolError("unknown_tool", `Unknown tool: "${name}". This server offers ${CODE_SEARCH}, ${CODE_DESCRIBE} and ${CODE_EXECUTE}; upstream tools are called from ${CODE_EXECUTE}'s program.`);
      }
    },
  };
}

/** The list fitted to the budget, with what it costs (once: it never changes); the whole list if the counter fails. */
function fittedList({ registry, counter, meter }: ViewSession, namespaces: readonly NamespaceLine[]): () => Promise<ToolListAnswer> {
  let listed: Promise<{ tools: Tool[]; tokens?: number }> | undefined;
  return async () => {
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
}
