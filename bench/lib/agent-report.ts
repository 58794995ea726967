// The agent-path benchmark's figures, goals and BENCHMARKS.md section (bench/agent-path.ts).
import type { Era, Tally } from "./agent-hosts.ts";
import { ERAS } from "./agent-hosts.ts";
import { table } from "./markdown.ts";
import { median } from "./results.ts";

export const VIEWS = ["meta", "code"] as const;
export type View = (typeof VIEWS)[number];

/** The issue's cap on the median tokens an agent reads per task, in every view and era. */
export const MEDIAN_GOAL = 2500;

export interface AgentRow {
  task: string;
  view: View;
  era: Era;
  solved: boolean;
  calls: number;
  /** Tokens read: the lists and the answers (structured content not counted). */
  tokens: number;
  listTokens: number;
  lists: number;
  answerTokens: number;
  structuredTokens: number;
  byTool: Tally["byTool"];
  /** `server/tool` of every upstream call the run made. */
  upstream: string[];
  /** Steps whose expected call did not reach an upstream. */
  missed: string[];
  notes: string[];
  error?: string;
}

export interface Goals {
  allSolved: { met: boolean; unsolved: string[] };
  codeNotMore: { met: boolean; over: Array<{ task: string; era: Era; code: number; meta: number }> };
  median: { goal: number; met: boolean; medians: Array<{ view: View; era: Era; median: number }> };
  /** The goals as printed lines. */
  lines: string[];
}

export interface AgentFigures {
  tasks: Array<{ id: string; prompt: string; steps: number; servers: string[] }>;
  servers: Record<string, { tools: number; lazy: boolean }>;
  rows: AgentRow[];
  goals: Goals;
  smoke: boolean;
}

const verdict = (met: boolean) => (met ? "met" : "missed");

/** The goals over the rows: a missing cell (task × view × era) counts as unsolved and as over any cap. */
export function judge(tasks: readonly string[], rows: readonly AgentRow[]): Goals {
  const cell = (task: string, view: View, era: Era) => rows.find((r) => r.task === task && r.view === view && r.era === era);
  const unsolved = tasks.flatMap((t) => VIEWS.flatMap((v) => ERAS.flatMap((e) => (cell(t, v, e)?.solved ? [] : [`${t} ${v} ${e}`]))));
  const over = tasks.flatMap((t) =>
    ERAS.flatMap((era) => {
      const [code, meta] = [cell(t, "code", era), cell(t, "meta", era)];
      if (code && meta && code.tokens <= meta.tokens) return [];
      return [{ task: t, era, code: code?.tokens ?? Number.NaN, meta: meta?.tokens ?? Number.NaN }];
    }),
  );
  const medians = VIEWS.flatMap((view) =>
    ERAS.map((era) => {
      const cells = tasks.map((t) => cell(t, view, era)?.tokens ?? Number.POSITIVE_INFINITY);
      return { view, era, median: median(cells) };
    }),
  );
  const medianMet = medians.every((m) => m.median <= MEDIAN_GOAL);
  const lines = [
    `every task solved: ${verdict(unsolved.length === 0)}${unsolved.length ? ` (${unsolved.length} of ${tasks.length * 4} not: ${unsolved.join(", ")})` : ""}`,
    `code view never reads more than the meta view: ${verdict(over.length === 0)}${over.length ? ` (${over.map((o) => `${o.task} ${o.era}: ${o.code} vs ${o.meta}`).join(", ")})` : ""}`,
    `median tokens per task <= ${MEDIAN_GOAL}: ${verdict(medianMet)} (${medians.map((m) => `${m.view} ${m.era} ${m.median}`).join(", ")})`,
  ];
  return { allSolved: { met: unsolved.length === 0, unsolved }, codeNotMore: { met: over.length === 0, over }, median: { goal: MEDIAN_GOAL, met: medianMet, medians }, lines };
}

const POLICY = [
  "- It reads the task's prompt, each step's request in the user's words and the values the user gave (never the expected " +
    "tools). A server is *named* when the step's words, else the prompt's (if it names just one), say its name.",
  "- **Meta view**: a named lazy server (listed in `discover_tool`'s catalog) is loaded first with `load_mcp`; " +
    "`discover_tool {query}` with the step's words (and `server`, the named server); if the answer offers a lazy server the " +
    "prompt names, it is loaded and searched; the top hit's schema by `discover_tool {tool_name}`; `use_tool` with " +
    "arguments built from it. In the 2026 era every call after a load carries the `toolset` the load answered " +
    "(structuredContent's `toolset`, else the handle its text quotes).",
  "- **Code view**: `search {query}` (with `server`, the named namespace: that loads a lazy one); a lazy namespace the answer " +
    "offers that the prompt names is searched by name; `describe` of the top path; at the end one `execute` of a program " +
    "making every step's call in order.",
  "- **Arguments**: each value the user gave goes to the field whose name says what the user called it (or an everyday " +
    "synonym: a comment is a `body` or `text`), else whose description does; a choice (enum) is taken from the request's " +
    "words; values get the field's type. Names, paths and handles are read from `structuredContent` where an answer has it, " +
    "else from the text.",
  "- An error whose text names a call (`call load_mcp {…}`) is followed once, then the failed call is made again.",
];

/** The BENCHMARKS.md section. */
export function agentMarkdown(f: AgentFigures): string {
  const serverText = (name: string) => `${name} (${f.servers[name]?.tools ?? "?"}${f.servers[name]?.lazy ? ", lazy" : ""})`;
  const team = Object.keys(f.servers).map(serverText).join(", ");
  const out = [
    "## Agent path: from a user's request to the right tool",
    "",
    `${f.tasks.length} tasks written as a user asks them, the tool never named (\`bench/lib/agent-tasks.ts\`), over a team of ` +
      `${Object.keys(f.servers).length} recorded corpus servers served by replay upstreams: ${team}. Each task is done by a scripted ` +
      "agent (`bench/lib/agent-scripts.ts`) through the proxy under `wrangler dev`, in the meta and code views, in a 2025 session " +
      "(the SDK v2 `Client`) and in the 2026 era (`@ai-sdk/mcp`'s client in its default era, calls made through its tool wrappers). " +
      "A task is solved when the upstreams received each step's expected call (one of its tools, with at least its arguments); " +
      "the agent never reads those. `npm run bench:agent`.",
    "",
    "The agent's policy, following only what the answers say:",
    "",
    ...POLICY,
    "",
    "**Tokens read**: o200k of the first `tools/list` (and of each list the host takes again after `notifications/tools/list_changed`, " +
      "counted as in *Context tokens*) plus what each answer puts before the model: for the SDK client the text content, for " +
      "`@ai-sdk/mcp` what its wrapper's `toModelOutput` passes (the text parts, or the JSON of a result without content). " +
      "`structuredContent` is not in the total: neither host shows it to the model here; its tokens are in their own column.",
    "",
    table(
      ["task", "user's request", "steps", "servers"],
      f.tasks.map((t) => [`\`${t.id}\``, t.prompt, t.steps, t.servers.map(serverText).join(", ")]),
      ["---", "---", "--:", "---"],
    ),
    "",
    table(
      ["task", "view", "era", "solved", "calls", "tokens read", "of which tools/list", "structured (not counted)"],
      f.rows.map((r) => [r.task, r.view, r.era, r.solved ? "yes" : `**no**${r.missed.length ? ` (${r.missed.join("; ")})` : ""}`, r.calls, r.tokens, r.listTokens, r.structuredTokens]),
      ["---", "---", "---", "---", "--:", "--:", "--:", "--:"],
    ),
    "",
    table(
      ["view", "era", "median tokens per task", "solved"],
      f.goals.median.medians.map((m) => [
        m.view,
        m.era,
        Number.isFinite(m.median) ? m.median : "missing cells",
        `${f.rows.filter((r) => r.view === m.view && r.era === m.era && r.solved).length} of ${f.tasks.length}`,
      ]),
      ["---", "---", "--:", "--:"],
    ),
    "",
    `**Goals.** Every task solved: **${verdict(f.goals.allSolved.met)}**` +
      (f.goals.allSolved.met ? "" : ` (not: ${f.goals.allSolved.unsolved.join(", ")})`) +
      `. The code view never reads more tokens than the meta view on the same task (per era): **${verdict(f.goals.codeNotMore.met)}**` +
      (f.goals.codeNotMore.met ? "" : ` (over: ${f.goals.codeNotMore.over.map((o) => `${o.task} ${o.era}, ${o.code} vs ${o.meta}`).join("; ")})`) +
      `. Median tokens per task ≤ ${MEDIAN_GOAL.toLocaleString("en-US")} in every view and era: **${verdict(f.goals.median.met)}**.`,
    "",
    ...whyMissed(f),
    ...whereTokensGo(f),
  ];
  return out.join("\n");
}

/** The measured reasons behind each missed goal: what an unsolved task called instead, where a view's tokens went. */
function whyMissed(f: AgentFigures): string[] {
  const lines: string[] = [];
  const unsolved = [...new Set(f.rows.filter((r) => !r.solved).map((r) => r.task))];
  for (const task of unsolved) {
    const rows = f.rows.filter((r) => r.task === task && !r.solved);
    const called = [...new Set(rows.flatMap((r) => r.upstream))];
    const errors = [...new Set(rows.flatMap((r) => (r.error ? [r.error] : [])))];
    const what = called.length ? `the agent called ${called.map((c) => `\`${c}\``).join(", ")}` : "no upstream call was made";
    lines.push(`- \`${task}\` (${rows.length} of ${VIEWS.length * ERAS.length} runs): ${what}${errors.length ? `; ${errors.join("; ")}` : ""}; missed ${rows[0]!.missed.join(", ")}.`);
  }
  for (const m of f.goals.median.medians.filter((x) => x.median > MEDIAN_GOAL)) {
    const rows = f.rows.filter((r) => r.view === m.view && r.era === m.era);
    const total = rows.reduce((n, r) => n + r.tokens, 0);
    const share = (n: number) => `${Math.round((n / Math.max(1, total)) * 100)}%`;
    const lists = rows.reduce((n, r) => n + r.listTokens, 0);
    const listed = rows.reduce((n, r) => n + r.lists, 0);
    const byTool = Object.entries(
      rows.reduce<Record<string, number>>((acc, r) => {
        for (const [tool, t] of Object.entries(r.byTool)) acc[tool] = (acc[tool] ?? 0) + t.tokens;
        return acc;
      }, {}),
    ).sort((a, b) => b[1] - a[1]);
    lines.push(
      `- ${m.view} view, ${m.era}: median ${m.median} tokens per task. Of all its tokens, tools/list ${share(lists)} (${listed} lists for ${rows.length} runs), ` +
        `${byTool.map(([tool, n]) => `\`${tool}\` ${share(n)}`).join(", ")}.`,
    );
  }
  return lines.length === 0 ? [] : ["Why goals were missed (measured in this run):", "", ...lines, ""];
}

/** Tokens read by what was called, summed over the tasks, per view and era. */
function whereTokensGo(f: AgentFigures): string[] {
  const tools = [...new Set(f.rows.flatMap((r) => Object.keys(r.byTool)))].sort();
  const rows = VIEWS.flatMap((view) =>
    ERAS.map((era) => {
      const mine = f.rows.filter((r) => r.view === view && r.era === era);
      const sum = (g: (r: AgentRow) => number) => mine.reduce((n, r) => n + g(r), 0);
      return [view, era, sum((r) => r.listTokens), ...tools.map((t) => sum((r) => r.byTool[t]?.tokens ?? 0) || ""), sum((r) => r.tokens)];
    }),
  );
  return [
    "Where the tokens go (all tasks together):",
    "",
    table(["view", "era", "tools/list", ...tools.map((t) => `\`${t}\``), "total"], rows, ["---", "---", ...Array(tools.length + 2).fill("--:")]),
    "",
  ];
}
