// `npm run dev`: a working local demo: real upstreams on loopback, the demo team seeded into local KV, `wrangler dev`.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { base64url } from "../src/lib/bytes.ts";
import { TeamStore } from "../src/store/store.ts";
import { wranglerKv } from "./lib/kv.ts";
import { startEverything, wranglerArgs, wranglerEnv } from "../harness/processes.ts";

const PORT = Number(process.env.PORT ?? 8787);
const TEAM = "demo";

/** Local settings live in the untracked .dev.vars; missing keys are generated once. */
function ensureDevVars(): Record<string, string> {
  let text = existsSync(".dev.vars") ? readFileSync(".dev.vars", "utf8") : "";
  const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
  const wanted: Record<string, () => string> = {
    SESSION_KEY: random,
    SECRETS_KEY: random,
    ADMIN_TOKEN: random,
    // Local only: the demo upstreams live on loopback over plain http.
    ALLOW_PRIVATE_UPSTREAMS: () => "true",
  };
  for (const [name, make] of Object.entries(wanted)) {
    if (new RegExp(`^${name}=`, "m").test(text)) continue;
    text += `${text && !text.endsWith("\n") ? "\n" : ""}${name}=${make()}\n`;
    console.log(`wrote ${name} into .dev.vars`);
  }
  writeFileSync(".dev.vars", text, { mode: 0o600 });
  return Object.fromEntries([...text.matchAll(/^([A-Z_]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]));
}

const vars = ensureDevVars();
const [upstream, lazyUpstream] = await Promise.all([
  startEverything(Number(process.env.DEMO_UPSTREAM_PORT) || undefined),
  startEverything(),
]);
console.log(`demo upstreams: server-everything at ${upstream.url} (eager) and ${lazyUpstream.url} (lazy)`);

const store = new TeamStore(wranglerKv({ remote: false }), { secretsKey: vars.SECRETS_KEY, urlPolicy: { allowPrivate: true } });
const stored = await store.putConfig(TEAM, {
  $schema: `http://127.0.0.1:${PORT}/config.schema.json`,
  mcp: {
    everything: { transport: "streamable-http", url: upstream.url },
    reference: {
      transport: "streamable-http",
      url: lazyUpstream.url,
      description:
        "A second copy of the MCP reference server, with sample resources, resource templates and prompts. Load it to try load_mcp or to read its sample resources.",
    },
  },
});
if (!stored.ok) throw new Error(`the demo config did not validate: ${JSON.stringify(stored.issues)}`);
const token = await store.mintToken(TEAM, "npm run dev");

const url = `http://127.0.0.1:${PORT}/t/${TEAM}/mcp`;
const wrangler = spawn(process.execPath, wranglerArgs(["dev", "--ip", "127.0.0.1", "--port", String(PORT)]), { stdio: "inherit", env: wranglerEnv() });

/** True once the Worker answers its health route (wrangler's own output stays on the terminal, untouched). */
async function up(): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${PORT}/health`, { signal: AbortSignal.timeout(2_000) })).ok;
  } catch {
    return false;
  }
}

// The demo's banner once the Worker answers, not before: a newcomer copies the command from it and runs it at once.
void (async () => {
  while (wrangler.exitCode === null && !(await up())) await new Promise((r) => setTimeout(r, 250));
  if (wrangler.exitCode !== null) return;
  console.log(`
  dynmcp-edge demo
  MCP URL : ${url}
  token   : ${token.token}
  admin   : http://127.0.0.1:${PORT}/admin (Bearer ADMIN_TOKEN from .dev.vars)
  pages   : http://127.0.0.1:${PORT}/dashboard (the dashboard: sign in with ADMIN_TOKEN from .dev.vars)
  try     : npx @modelcontextprotocol/inspector --cli ${url} --transport http --header "Authorization: Bearer ${token.token}" --method tools/list
`);
})();

const stopUpstreams = () => Promise.all([upstream.stop(), lazyUpstream.stop()]);
const shutdown = async () => {
  wrangler.kill("SIGTERM");
  await stopUpstreams();
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
wrangler.on("exit", async (code) => {
  await stopUpstreams();
  process.exit(code ?? 0);
});
