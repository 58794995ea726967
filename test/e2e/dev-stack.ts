// What most end-to-end files start before their first test and stop after their last: a temporary folder with the
// proxy's local state, server-everything and a replay server of recorded catalogs on loopback, the state seeded by
// the file (teams, tokens, secrets: the team CLI writes it before wrangler dev holds it), and `wrangler dev` over it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, startEverything, startWranglerDev, type Running } from "../../harness/processes.ts";
import { startReplayServer, type ReplayServer } from "../../harness/replay-server.ts";
import type { ReplayRoute } from "../../harness/replay-types.ts";

/** The parts a file seeds its state from. */
export interface StackParts {
  /** The file's temporary folder (removed by `stop`). */
  dir: string;
  /** The proxy's local state (`--persist-to`), inside `dir`. */
  state: string;
  everything: Running;
  replay: ReplayServer;
}

export interface DevStack extends StackParts {
  proxy: Running;
  port: number;
  /** A team's MCP URL on this proxy, with an optional query (`?view=code`). */
  mcpUrl: (team: string, query?: string) => string;
  /** Stops the proxy and the upstreams and removes the folder. */
  stop: () => Promise<void>;
}

export async function startDevStack(opts: {
  /** Names the temporary folder (`dynmcp-e2e-<name>-…`). */
  name: string;
  /** The replay server's routes: recorded catalogs, with faults where a test wants them. */
  replay: Record<string, ReplayRoute>;
  /** Worker vars for `wrangler dev`. */
  vars: Record<string, string>;
  /** Seeds the state before the proxy starts. */
  provision: (parts: StackParts) => void | Promise<void>;
}): Promise<DevStack> {
  const dir = mkdtempSync(join(tmpdir(), `dynmcp-e2e-${opts.name}-`));
  const started: Array<{ stop: () => Promise<void> }> = [];
  const stopAll = async () => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [everything, replay] = await Promise.all([startEverything(), startReplayServer(opts.replay)]);
    started.push(everything, { stop: () => replay.close() });
    const parts = { dir, state: join(dir, "state"), everything, replay };
    await opts.provision(parts);
    const port = await freePort();
    const proxy = await startWranglerDev({ persistTo: parts.state, vars: opts.vars, port });
    started.push(proxy);
    return { ...parts, proxy, port, mcpUrl: (team, query = "") => `http://127.0.0.1:${port}/t/${team}/mcp${query}`, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
