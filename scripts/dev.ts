// `npm run dev`: a working local demo: a real upstream on loopback, the demo team seeded into local KV, `wrangler dev`.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { base64url, mintToken } from "../src/auth/token.ts";
import { kvKeys } from "../src/config/keys.ts";
import { kvPut } from "./lib/kv.ts";
import { startEverything, wranglerArgs } from "./lib/processes.ts";

const PORT = Number(process.env.PORT ?? 8787);
const TEAM = "demo";

/** Local secrets live in the untracked .dev.vars; a missing key is generated once. */
function ensureDevVars(): void {
  const existing = existsSync(".dev.vars") ? readFileSync(".dev.vars", "utf8") : "";
  if (/^SESSION_KEY=/m.test(existing)) return;
  const key = base64url(crypto.getRandomValues(new Uint8Array(32)));
  writeFileSync(".dev.vars", `${existing}${existing && !existing.endsWith("\n") ? "\n" : ""}SESSION_KEY=${key}\n`, { mode: 0o600 });
  console.log("wrote a new SESSION_KEY into .dev.vars");
}

ensureDevVars();
const [upstream, lazyUpstream] = await Promise.all([
  startEverything(Number(process.env.DEMO_UPSTREAM_PORT) || undefined),
  startEverything(),
]);
console.log(`demo upstreams: server-everything at ${upstream.url} (eager) and ${lazyUpstream.url} (lazy)`);

const config = {
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
};
kvPut({ remote: false }, kvKeys.config(TEAM), JSON.stringify(config));
const token = await mintToken();
kvPut({ remote: false }, kvKeys.token(TEAM, token.id), JSON.stringify({ hash: token.hash, label: "npm run dev", createdAt: new Date().toISOString() }));

const url = `http://127.0.0.1:${PORT}/t/${TEAM}/mcp`;
const wrangler = spawn(process.execPath, wranglerArgs(["dev", "--ip", "127.0.0.1", "--port", String(PORT)]), { stdio: "inherit" });
setTimeout(() => {
  console.log(`
  dynmcp-edge demo
  MCP URL : ${url}
  token   : ${token.token}
  try     : npx @modelcontextprotocol/inspector --cli ${url} --transport http --header "Authorization: Bearer ${token.token}" --method tools/list
`);
}, 4000);

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
