// Endless programs under `wrangler dev`, where workerd enforces no CPU limit and runs every isolate on one thread:
// each program the agent could write by mistake (a plain loop of each kind, an awaiting loop, an endless recursion)
// ends with an isError result naming its CPU time limit, well within the wall limit; while one spins, another
// session keeps getting answers (a program's checkpoints yield the thread in async code); and the session runs its
// next program. A loop inside a plain (non-async) function cannot yield: it holds the thread until the CPU limit,
// and the proxy answers again after it. The SDK Client and server-everything are the real ones.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectClient, provisionTeam } from "../../harness/clients.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";
import { ENDLESS_PROGRAMS, YIELDING } from "../shared/endless-programs.ts";

/** A CPU limit well below the wall limit: a spinning program must end by the first, long before the second. */
const CPU_MS = 1000;
const WALL_MS = 30_000;
const VARS = { SESSION_KEY: "e2e-session-key", CODE_CPU_MS: String(CPU_MS), CODE_WALL_MS: String(WALL_MS) };

let stack: DevStack;
let token: string;

beforeAll(async () => {
  stack = await startDevStack({
    name: "endless",
    replay: {},
    vars: VARS,
    provision: ({ dir, state, everything }) => {
      token = provisionTeam(dir, state, "loops", { mcp: { everything: { url: everything.url } } });
    },
  });
});

afterAll(() => stack?.stop());

const execute = async (client: Client, code: string): Promise<CallToolResult> =>
  (await client.request({ method: "tools/call", params: { name: "execute", arguments: { code } } }, CallToolResultSchema, { timeout: 120_000 })) as CallToolResult;

/** Another session's round trip: a use_tool through the meta view, answered by server-everything. */
async function otherSessionAnswers(client: Client): Promise<boolean> {
  const result = (await client.request(
    { method: "tools/call", params: { name: "use_tool", arguments: { tool_name: "everything/get-sum", tool_input: { a: 20, b: 22 } } } },
    CallToolResultSchema,
    { timeout: 120_000 },
  )) as CallToolResult;
  return text(result).includes("42");
}

describe("endless programs under wrangler dev", () => {
  for (const name of YIELDING) {
    const code = ENDLESS_PROGRAMS[name];
    it(`ends ${name} at its CPU limit; another session is answered meanwhile; the session runs again`, async () => {
      const spinner = await connectClient(stack.mcpUrl("loops", "?view=code"), token);
      const other = await connectClient(stack.mcpUrl("loops"), token);
      const started = Date.now();
      let running = true;
      const run = execute(spinner.client, code).finally(() => (running = false));
      // Answers the other session got while the program was still running.
      let answeredMeanwhile = 0;
      while (running) {
        const ok = await otherSessionAnswers(other.client);
        if (ok && running) answeredMeanwhile++;
      }
      const result = await run;
      const elapsed = Date.now() - started;
      expect(result.isError, text(result)).toBe(true);
      expect(text(result)).toContain(`The program used more than its CPU time limit of ${CPU_MS} ms and was stopped`);
      expect(elapsed).toBeLessThan(WALL_MS);
      expect(answeredMeanwhile).toBeGreaterThan(0);
      const again = await execute(spinner.client, "return 1 + 1;");
      expect(again.isError, text(again)).toBeFalsy();
      expect(text(again)).toBe("2");
      await Promise.all([spinner.client.close(), other.client.close()]);
    }, 120_000);
  }

  it("ends a loop in a plain function at its CPU limit (the thread is held until then), and every session answers after it", async () => {
    const spinner = await connectClient(stack.mcpUrl("loops", "?view=code"), token);
    const other = await connectClient(stack.mcpUrl("loops"), token);
    const result = await execute(spinner.client, ENDLESS_PROGRAMS["a loop in a plain function"]);
    expect(result.isError, text(result)).toBe(true);
    expect(text(result)).toContain(`CPU time limit of ${CPU_MS} ms`);
    expect(await otherSessionAnswers(other.client)).toBe(true);
    expect(text(await execute(spinner.client, "return 'again';"))).toBe('"again"');
    await Promise.all([spinner.client.close(), other.client.close()]);
  }, 120_000);
});
