// The "client" the MCP conformance suite runs for each of its client `auth/*` scenarios (`conformance client
// --command …`, started by scripts/conformance.ts): here the client under test is the proxy's OAuth client of its
// upstreams (src/edge/oauth/upstream-connect.ts), and this command only plays the people around it.
//
//   argv:  <server-url>, the scenario's MCP server (always the last argument; the suite appends it)
//   env:   MCP_CONFORMANCE_SCENARIO   the scenario's name, e.g. auth/metadata-default (set by the suite)
//          MCP_CONFORMANCE_CONTEXT    JSON, for scenarios that hand the client credentials (client_id, client_secret,
//                                     a private key, …); an id with a secret becomes the entry's configured client
//          DYNMCP_PROXY_URL           the running `wrangler dev` (set by scripts/conformance.ts)
//          DYNMCP_ADMIN_TOKEN         its admin API token (likewise)
//          DYNMCP_CLIENT_DEADLINE_MS  optional: when this command gives up (default 25000, below the suite's default
//                                     client time-out of 30 s; the runner passes its own, below the --timeout it gives)
//
// For the scenario it:
//   1. stores, through the admin API, a team of its own whose one upstream `up` is the scenario's server with
//      `auth: { type: "oauth", mode: "shared" }` (and, when the context names a pre-registered client, that client,
//      its secret kept as a team secret), and mints the team a token;
//   2. asks the admin API for the shared account's connect link and walks it like the admin's browser would
//      (test/shared/oauth-driver.ts `signInAs`): proxy → the scenario's authorization server, which approves at once
//      → the proxy's /oauth/upstream/callback, where the proxy exchanges the code;
//   3. calls the upstream's tool through the proxy's MCP endpoint as a host does (`use_tool up/test-tool`), so the
//      scenario's server sees the proxy's bearer token.
// The scenario's own checks judge the proxy; the exit code (0 when the connect page said connected and the tool
// answered) only tells the suite's log whether the flow got through. What happened is written to stderr, which the
// suite keeps in the scenario's stderr.txt.
//
// Bounded: every request is to a loopback address (anything else is refused before it is sent); the admin calls, each
// step of the browser walk and the MCP requests have time limits of their own, and the whole run ends itself before
// the suite's own client time-out.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { signInAs } from "../test/shared/oauth-driver.ts";

/** The whole run, below the suite's client time-out so that this process says why it stopped. */
const RUN_DEADLINE_MS = Number(process.env.DYNMCP_CLIENT_DEADLINE_MS) || 25_000;
/** One admin API request (the first ones of a run wait for the proxy's cold start, under the load of a whole suite). */
const ADMIN_TIMEOUT_MS = 15_000;
/** Connecting to the proxy, and then the tool call through it (each; the proxy reaches the upstream meanwhile). */
const CALL_TIMEOUT_MS = 20_000;
/** The upstream's name in the team's config: its tools are `up/<name>` behind the meta-tools. */
const SERVER = "up";
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const say = (...parts: unknown[]): void => console.error(`[${scenario}]`, ...parts);

function fail(message: string): never {
  say(message);
  process.exit(1);
}

const deadline = setTimeout(() => fail(`gave up after ${RUN_DEADLINE_MS} ms`), RUN_DEADLINE_MS);

/** A loopback http(s) URL, or the run ends here. */
function loopbackUrl(value: string | undefined, what: string): URL {
  let url: URL;
  try {
    url = new URL(value ?? "");
  } catch {
    fail(`${what} is not a URL: ${JSON.stringify(value)}`);
  }
  if (!/^https?:$/.test(url.protocol) || !LOOPBACK.has(url.hostname)) fail(`${what} is not a loopback http(s) URL: ${url.href}`);
  return url;
}

// Every request of this process (the admin API, the browser walk, the MCP client) goes through the global fetch:
// guarded here, so nothing leaves the machine whatever a scenario's server redirects to.
const realFetch = globalThis.fetch;
globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const href = input instanceof Request ? input.url : String(input);
  const host = new URL(href).hostname;
  if (!LOOPBACK.has(host)) return Promise.reject(new Error(`refused a request to ${host}: this command only talks to loopback addresses`));
  return realFetch(input, init);
};

/** A short, single-line text of an error (the SDK's carry the upstream's words; none carries a token). */
const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").slice(0, 400);

async function main(): Promise<number> {
  if (!/^auth\/[\w.-]+$/.test(scenario)) fail(`MCP_CONFORMANCE_SCENARIO is not an auth/* scenario: ${JSON.stringify(scenario)}`);
  const server = loopbackUrl(process.argv.at(-1), "the server URL (last argument)");
  const proxy = loopbackUrl(process.env.DYNMCP_PROXY_URL, "DYNMCP_PROXY_URL").origin;
  const adminToken = process.env.DYNMCP_ADMIN_TOKEN || fail("DYNMCP_ADMIN_TOKEN is not set");
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}") as { client_id?: unknown; client_secret?: unknown };
  // One team per scenario (auth/metadata-var1 → auth-metadata-var1): the scenarios of a suite run side by side.
  const team = `auth-${scenario.slice("auth/".length).toLowerCase().replace(/[^a-z0-9_-]/g, "-")}`.slice(0, 64);
  const admin = { authorization: `Bearer ${adminToken}`, "content-type": "application/json" };
  const adminCall = (path: string, method: string, body?: unknown): Promise<Response> =>
    fetch(`${proxy}/admin/teams/${team}${path}`, { method, headers: admin, signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS), ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  // 1. The team: the scenario's server as an OAuth upstream of the shared kind.
  const auth: Record<string, unknown> = { type: "oauth", mode: "shared" };
  if (typeof context.client_id === "string" && typeof context.client_secret === "string") {
    // A pre-registered client: a config never holds a secret, so it is a team secret the entry names.
    const stored = await adminCall("/secrets/UPSTREAM_CLIENT_SECRET", "PUT", { value: context.client_secret });
    if (!stored.ok) fail(`storing the client secret: HTTP ${stored.status} ${await stored.text()}`);
    auth.client = { id: context.client_id, secret: "${secret:UPSTREAM_CLIENT_SECRET}" };
    say(`pre-registered client ${context.client_id}`);
  }
  const config = { mcp: { [SERVER]: { transport: "streamable-http", url: server.href, auth } } };
  const put = await adminCall("/config", "PUT", config);
  if (!put.ok) fail(`storing the team's config: HTTP ${put.status} ${await put.text()}`);
  const minted = await adminCall("/tokens", "POST", { label: "conformance-auth" });
  if (!minted.ok) fail(`minting the team's token: HTTP ${minted.status} ${await minted.text()}`);
  const token = ((await minted.json()) as { token: string }).token;

  // 2. The shared account's connect link, walked by the admin's browser. The scenario's authorization server
  // approves without a page, so the walk ends on the proxy's callback page: 200 "Connected", or the reason it is not.
  const linkResponse = await adminCall(`/upstreams/${SERVER}/connect`, "POST");
  if (!linkResponse.ok) fail(`the connect link: HTTP ${linkResponse.status} ${await linkResponse.text()}`);
  const link = new URL(((await linkResponse.json()) as { url: string }).url);
  const outcome = await signInAs(link.href, { proxyOrigin: link.origin, proxy: (request) => fetch(request), account: "conformance" });
  say("connect walk:", outcome.trail.steps.map((s) => `${s.method} ${s.url.replace(/\?.*/, "?…")} → ${s.status}`).join(" | "));
  const connected = outcome.kind === "page" && outcome.status === 200;
  say(outcome.kind === "page" ? `connect page ${outcome.status}: ${outcome.text.slice(0, 300)}` : `the walk left for ${outcome.url.origin}`);

  // 3. A host's call through the proxy, whatever the connect's outcome: some scenarios (scope step-up, retry limits)
  // are about what the client does when the server answers that call.
  const client = new Client({ name: "dynmcp-conformance-auth-host", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${proxy}/t/${team}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  let called = false;
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
    const result = await client.callTool({ name: "use_tool", arguments: { tool_name: `${SERVER}/test-tool`, tool_input: {} } }, undefined, { timeout: CALL_TIMEOUT_MS });
    called = result.isError !== true;
    say(`use_tool ${SERVER}/test-tool:`, JSON.stringify(result).slice(0, 400));
  } catch (err) {
    say(`use_tool ${SERVER}/test-tool threw: ${reasonOf(err)}`);
  } finally {
    await client.close().catch(() => {});
  }
  return connected && called ? 0 : 1;
}

main().then(
  (code) => {
    clearTimeout(deadline);
    // Exit now: a keep-alive socket to the proxy or the scenario's server must not hold the process until the suite's
    // time-out.
    process.exit(code);
  },
  (err: unknown) => fail(`failed: ${reasonOf(err)}`),
);
