// `npm run bench:agent`: what an agent reads on its way from a user's request to the right tool. Tasks written as a
// user asks (bench/lib/agent-tasks.ts, the tool never named) over a team of twelve recorded corpus servers, four of
// them lazy (gitlab's 118 tools and azure-devops's 40 among them), served by replay upstreams; the proxy under
// `wrangler dev`; each task done by a scripted agent in the meta and code views and in both eras: 2025 through the
// SDK v2 Client in a session, 2026 through `@ai-sdk/mcp`'s client in its default era. A task is solved when the
// upstreams received each step's expected call (any of its tools, with at least its arguments).
//
// The agent's policy (bench/lib/agent-scripts.ts), following only what the answers say:
// - It reads the task's prompt, each step's request in the user's words and the values the user gave; never the
//   expected tools. A server is "named" when the request's words (else the prompt's, if it names one) say its name.
// - Meta view: a named lazy server (the catalog in discover_tool's description lists it) is loaded first with
//   `load_mcp`; `discover_tool {query}` (narrowed with `server` to the named server); if the answer offers a lazy
//   server the prompt names, it is loaded and searched; the top hit is looked up with `discover_tool {tool_name}`;
//   `use_tool` with arguments built from that schema. In the 2026 era each call after a load carries the `toolset`
//   the load answered (structuredContent's `toolset`, else the handle its text quotes).
// - Code view: `search {query}` (with `server` the named namespace, which loads a lazy one); a lazy namespace the
//   answer offers that the prompt names is searched by name; `describe` of the top path; one `execute` at the end,
//   a program making every step's call in order.
// - Arguments (bench/lib/agent-arguments.ts): each value the user gave goes to the field whose name says what the
//   user called it (or an everyday synonym), else whose description does; a choice (enum) is taken from the
//   request's words; values get the field's type.
// - An error whose text names a call (`call load_mcp {…}`) is followed once, then the call is made again.
// Tokens read: o200k of the first tools/list (and each list after a list change), plus what each answer puts before
// the model (agent-hosts.ts: the text content; structuredContent counted on its own, not in the total).
// `--smoke`: two tasks, nothing written. `AGENT_DEBUG=1` adds the tools/list descriptions the agent read to its
// notes (printed under each run), to see what a reworded answer gives it. The last line printed is `FIGURES <json>`.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { E2E_SECRETS_KEY, provisionByAdmin } from "../harness/clients.ts";
import { startWranglerDev, type Running } from "../harness/processes.ts";
import { loadCorpus, startReplayServer, type ReplayServer } from "../harness/replay-server.ts";
import { snapshotProxy, type ProxySnapshot } from "./floor/proxy-snapshot.ts";
import { ERAS, openHost, type Era, type Tally } from "./lib/agent-hosts.ts";
import { agentMarkdown, judge, VIEWS, type AgentFigures, type AgentRow, type View } from "./lib/agent-report.ts";
import { codeAgent, metaAgent } from "./lib/agent-scripts.ts";
import { AGENT_TASKS, AGENT_TEAM, type AgentTask } from "./lib/agent-tasks.ts";
import { finishRun, isSmoke } from "./lib/results.ts";
import { teardown } from "./lib/teardown.ts";
import { CORPUS_SERVERS } from "./tokens.ts";

const smoke = isSmoke();
const TASKS = smoke ? AGENT_TASKS.filter((t) => t.id === "gl-mr-files" || t.id === "gh-pr-files") : AGENT_TASKS;
const TEAM = "agents";
const ADMIN_TOKEN = "bench-admin-token";
/** A 32-byte session key (as deployed); CODE_MODE on so `?view=code` is served while the view is dark. */
const PROXY_VARS = { SESSION_KEY: "bench-session-key-0123456789abcd", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN, CODE_MODE: "on" };

/** Every step's expected call among what the upstreams received during a run; the steps not matched. */
function unmatchedSteps(task: AgentTask, received: Array<{ tool: string; arguments: Record<string, unknown> }>): string[] {
  return task.steps.flatMap((step, i) => {
    const made = received.some((c) => step.expect.tools.includes(c.tool) && Object.entries(step.expect.args).every(([k, v]) => isDeepStrictEqual(c.arguments[k], v)));
    return made ? [] : [`step ${i + 1} (${step.expect.tools.join(" or ")})`];
  });
}

/** A fresh token for each run, so no run finds what another loaded (2026 code objects are per token). */
async function mintToken(proxyUrl: string): Promise<string> {
  const res = await fetch(`${proxyUrl}/admin/teams/${TEAM}/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ label: "bench-agent" }),
  });
  if (!res.ok) throw new Error(`minting a token: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

async function runOnce(proxy: Running, replay: ReplayServer, task: AgentTask, view: View, era: Era): Promise<AgentRow> {
  const before = new Map(AGENT_TEAM.map((s) => [s.name, replay.stats(s.name).calls.length]));
  const token = await mintToken(proxy.url);
  const host = await openHost(era, `${proxy.url}/t/${TEAM}/mcp?view=${view}`, token);
  let notes: string[] = [];
  let error: string | undefined;
  try {
    notes = view === "meta" ? await metaAgent(host, task) : await codeAgent(host, task);
  } catch (err) {
    error = (err instanceof Error ? err.message : String(err)).split("\n")[0]!.slice(0, 300);
  } finally {
    await host.close().catch(() => undefined);
  }
  const received = AGENT_TEAM.flatMap((s) =>
    replay
      .stats(s.name)
      .calls.slice(before.get(s.name))
      .map((c) => ({ tool: `${s.name}/${c.name}`, arguments: (c.arguments ?? {}) as Record<string, unknown> })),
  );
  const missed = unmatchedSteps(task, received);
  const tally: Tally = host.tally;
  return {
    task: task.id,
    view,
    era,
    solved: error === undefined && missed.length === 0,
    calls: tally.calls,
    tokens: tally.listTokens + tally.answerTokens,
    listTokens: tally.listTokens,
    lists: tally.lists,
    answerTokens: tally.answerTokens,
    structuredTokens: tally.structuredTokens,
    byTool: tally.byTool,
    upstream: received.map((c) => c.tool),
    missed,
    notes,
    ...(error === undefined ? {} : { error }),
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const replay = await startReplayServer(Object.fromEntries(AGENT_TEAM.map((s) => [s.name, { catalog: loadCorpus(s.file) }])));
  const dir = mkdtempSync(join(tmpdir(), "dynmcp-bench-agent-"));
  let proxy: Running | undefined;
  let snapshot: ProxySnapshot | undefined;
  try {
    snapshot = snapshotProxy();
    proxy = await startWranglerDev({ persistTo: join(dir, "state"), vars: PROXY_VARS, config: snapshot.config });
    const mcp = Object.fromEntries(
      AGENT_TEAM.map((s) => {
        const description = CORPUS_SERVERS.find((c) => c.name === s.name)?.description;
        return [s.name, { url: replay.url(s.name), ...(s.lazy ? { description } : {}) }];
      }),
    );
    await provisionByAdmin(proxy.url, ADMIN_TOKEN, TEAM, { mcp }, "bench-agent");
    const rows: AgentRow[] = [];
    for (const task of TASKS) {
      for (const view of VIEWS) {
        for (const era of ERAS) {
          const row = await runOnce(proxy, replay, task, view, era);
          rows.push(row);
          const how = row.solved ? "solved" : `NOT solved (${row.error ?? row.missed.join(", ")})`;
          console.log(`${task.id} ${view} ${era}: ${how}; ${row.calls} calls, ${row.tokens} tokens (tools/list ${row.listTokens} in ${row.lists}, answers ${row.answerTokens}; structured ${row.structuredTokens} not counted)`);
          for (const note of row.notes) console.log(`    ${note}`);
        }
      }
    }
    const servers = Object.fromEntries(AGENT_TEAM.map((s) => [s.name, { tools: loadCorpus(s.file).tools.length, lazy: s.lazy }]));
    const figures: AgentFigures = { tasks: TASKS.map((t) => ({ id: t.id, prompt: t.prompt, steps: t.steps.length, servers: [...new Set(t.steps.flatMap((s) => s.expect.tools.map((n) => n.split("/")[0]!)))] })), servers, rows, goals: judge(TASKS.map((t) => t.id), rows), smoke };
    for (const line of figures.goals.lines) console.log(line);
    console.log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const text = agentMarkdown(figures);
    if (smoke) console.log(text);
    finishRun({ name: "agent-path", figures, markdown: text, smoke, wranglerOutput: proxy.output() });
  } finally {
    await teardown({ proxy, snapshot, replay, dir });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
