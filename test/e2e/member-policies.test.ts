// The team's tool policies as two signed-in members meet them under `wrangler dev`: a team whose identity provider is
// the oidc-provider fixture (harness/idp.ts), one member in `staff`, one in `contractors` at a partner's domain, and
// policies by group, domain and user that give them different catalogs of server-everything (an eager copy and a lazy
// one). Both sign in through the proxy's OAuth flow (the v2 SDK's auth provider, the member's browser driven over
// HTTP), then at once each goes through a 2025 session's meta, direct and code views and the 2026-07-28 era's meta and
// code views: each sees exactly its catalog, and a hidden tool called by name is answered as one that does not exist.
// Then the audit API holds every call each made, under the member's verified email, the hidden ones denied; its
// filters work; and a distinctive argument passed in every call is nowhere in its answers or in wrangler's output.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { E2E_SECRETS_KEY, connectClient, provisionTeam, teamCli } from "../../harness/clients.ts";
import { startIdp, type Idp, type IdpAccount } from "../../harness/idp.ts";
import { MAX_SUGGESTED } from "../../src/catalog/render.ts";
import { HostProvider } from "../shared/host-provider.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { waitFor } from "../shared/wait.ts";
import { startDevStack, type DevStack } from "./dev-stack.ts";
import { text } from "./helpers.ts";

const ADMIN_TOKEN = "e2e-admin";
const VARS = { SESSION_KEY: "e2e-session-key", SECRETS_KEY: E2E_SECRETS_KEY, ADMIN_TOKEN, OAUTH_HOSTS: "on" };
const TEAM = "members";
/** Passed in every call's arguments: it reaches the upstream, and must be nowhere in the audit trail or the logs. */
const MARKER = `secret-marker-${randomBytes(8).toString("hex")}`;

/**
 * The reference server's tools that need no client capability: the entries keep only these (others come and go with
 * what the host that first connected declared), so every catalog below is known exactly.
 */
const EVERYTHING = [
  "echo",
  "get-annotated-message",
  "get-env",
  "get-resource-links",
  "get-resource-reference",
  "get-structured-content",
  "get-sum",
  "get-tiny-image",
  "gzip-file-as-resource",
  "toggle-simulated-logging",
  "toggle-subscriber-updates",
  "trigger-long-running-operation",
];
const POLICIES = [
  { who: ["group:contractors"], deny: ["vault/*", "everything/get-env"] },
  { who: ["domain:partner.test"], deny: ["everything/get-tiny-image"] },
  { who: ["user:sam@example.com"], deny: ["everything/gzip-file-as-resource"] },
];

/** A member (its account at the IdP) and what the policies leave it: the tools of `everything` hidden from it, and whether it has `vault`. */
interface Member {
  account: IdpAccount;
  hidden: string[];
  vault: boolean;
}
const MEMBERS: Member[] = [
  { account: { sub: "sam", email: "sam@example.com", email_verified: true, groups: ["staff"] }, hidden: ["gzip-file-as-resource"], vault: true },
  { account: { sub: "cory", email: "cory@partner.test", email_verified: true, groups: ["contractors"] }, hidden: ["get-env", "get-tiny-image"], vault: false },
];

let stack: DevStack;
let idp: Idp;
let baselineToken: string;

const base = () => `http://localhost:${stack.port}`;
/** The MCP URL as hosts and the member's browser name it (the access token's resource is this origin's). */
const mcpUrl = (query = "") => `${base()}/t/${TEAM}/mcp${query}`;

beforeAll(async () => {
  stack = await startDevStack({
    name: "members",
    replay: {},
    vars: VARS,
    provision: ({ dir, state, everything: upstream }) => {
      provisionTeam(dir, state, TEAM, {
        mcp: {
          everything: { url: upstream.url, tools: { allow: EVERYTHING } },
          vault: { url: upstream.url, description: "A second copy of the reference server.", tools: { allow: EVERYTHING } },
        },
        policies: POLICIES,
      });
      const minted = teamCli(["token", TEAM, "--label", "baseline", "--persist-to", state]);
      if (minted.status !== 0) throw new Error(`team token failed: ${minted.stderr}`);
      baselineToken = minted.stdout.trim().split("\n").at(-1)!;
    },
  });
  // The IdP's one client may be sent back only to this proxy's callback, whose port is known now.
  idp = await startIdp({ accounts: MEMBERS.map((m) => m.account), redirectUris: [`${base()}/t/${TEAM}/oauth/callback`] });
  for (const [path, body] of [
    ["secrets/IDP_SECRET", { value: idp.client.secret }],
    ["oauth", { issuer: idp.issuer, client_id: idp.client.id, client_secret: "IDP_SECRET", allowed_groups: ["staff", "contractors"] }],
  ] as const) {
    const res = await fetch(`${base()}/admin/teams/${TEAM}/${path}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`PUT ${path}: HTTP ${res.status} ${await res.text()}`);
  }
  // A team token no rule selects sees both servers whole.
  const direct = await connectClient(stack.mcpUrl(TEAM, "?view=direct"), baselineToken);
  const listed = (await direct.client.listTools()).tools.map((t) => t.name).sort();
  await direct.client.close();
  expect(listed).toEqual(["everything", "vault"].flatMap((server) => EVERYTHING.map((tool) => `${server}__${tool}`)).sort());
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([stack?.stop(), idp?.close()]);
}, 120_000);

/** The member signs in as a host meets it: 401, discovery, registration, the browser through consent and the IdP, the code exchanged. */
async function signIn(member: Member): Promise<HostProvider> {
  const { sub } = member.account;
  const host = new HostProvider({ name: `Host of ${sub}`, redirectUri: "http://127.0.0.1:1/callback" });
  const first = new ModernTransport(new URL(mcpUrl()), { authProvider: host });
  await expect(new ModernClient({ name: "members-host", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const outcome = await signInAs(host.authorizations[0]!.href, { proxyOrigin: base(), proxy: (request) => fetch(request), account: sub });
  if (outcome.kind !== "redirect") throw new Error(`${sub}'s sign-in stopped at ${outcome.url.pathname}: ${outcome.text}`);
  await first.finishAuth(outcome.url.searchParams);
  expect(host.stored?.access_token).toBeTruthy();
  return host;
}

/** An audit entry as the tour expects it: kind, view, era, tool, outcome. */
type Made = string;
const made = (kind: string, view: string, era: string, tool: string, outcome: string): Made => `${kind} ${view} ${era} ${tool} ${outcome}`;

/** The names in discover_tool's description: `server/tool` of its `<tools>` block (in full), and the servers under `<mcp_servers>`. */
function catalogOf(description: string): { tools: string[]; lazy: string[] } {
  const block = (tag: string) => new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`).exec(description)?.[1]?.split("\n") ?? [];
  const tools: string[] = [];
  let server = "";
  for (const line of block("tools")) {
    const group = /^([\w-]+):$/.exec(line)?.[1];
    const tool = /^- ([^:\s]+)/.exec(line)?.[1];
    if (group !== undefined) server = group;
    else if (tool !== undefined) tools.push(`${server}/${tool}`);
    else throw new Error(`not a line of a full catalog: ${line}`);
  }
  return { tools: tools.sort(), lazy: block("mcp_servers").map((line) => line.slice(0, line.indexOf(":"))) };
}

/** The names an unknown-tool answer suggests, sorted (their order follows the name asked for). */
const suggestions = (answer: string) =>
  answer.replace(/^Unknown tool: "[^"]*"\. Available tools \(closest first\): /, "").replace(/ … and \d+ more[^\n]*$/, "").replace(/\.$/, "").split(", ").sort();

/**
 * An unknown-tool answer suggests the closest of the caller's own tools (at most MAX_SUGGESTED) and counts the rest
 * of them: nothing it does not see is named or counted.
 */
function expectSuggested(answer: string, own: readonly string[]): void {
  const named = suggestions(answer);
  expect(named).toHaveLength(Math.min(MAX_SUGGESTED, own.length));
  expect(named.filter((name) => !own.includes(name))).toEqual([]);
  const more = own.length - named.length;
  if (more > 0) expect(answer).toContain(` … and ${more} more`);
  else expect(answer).not.toContain(" more");
}
/** The tool names of a search's answer lines (`- server/tool: …` in the meta view, `ns.method: …` in the code view). */
const hitNames = (answer: string) => [...answer.matchAll(/^(?:- )?([\w$.\/-]+): /gm)].map((m) => m[1]!);
/** The methods a code-view namespace's index names (`- everything.method: …`). */
const methodsOf = (index: string) => [...index.matchAll(/^- everything\.([A-Za-z_$][\w$]*)(?::|$)/gm)].map((m) => m[1]!).sort();
const codeName = (tool: string) => tool.replace(/-/g, "_");

/** The tools of server-everything the member sees, by their own names. */
const visible = (member: Member) => EVERYTHING.filter((t) => !member.hidden.includes(t));

/** The 2026-07-28 era: the v2 client in its automatic mode, signed in through the member's host provider. */
async function modern(host: HostProvider, query = ""): Promise<ModernClient> {
  const client = new ModernClient({ name: "members-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new ModernTransport(new URL(mcpUrl(query)), { authProvider: host }));
  expect(client.getProtocolEra()).toBe("modern");
  return client;
}

type Call = (name: string, args: Record<string, unknown>) => Promise<unknown>;

/** The meta view of either era: its catalog, a hidden tool unknown by name and in a lookup, a visible one called. */
async function metaChecks(member: Member, era: string, call: Call, list: () => Promise<string>, entries: Made[]): Promise<void> {
  const mine = visible(member).map((t) => `everything/${t}`);
  const hidden = `everything/${member.hidden[0]}`;
  const catalog = catalogOf(await list());
  expect(catalog.tools).toEqual(mine);
  expect(catalog.lazy).toEqual(member.vault ? ["vault"] : []);
  const lookedUp = await call("discover_tool", { tool_name: hidden });
  expect(text(lookedUp)).toMatch(new RegExp(`^Unknown tool: "${hidden}"`));
  const found = hitNames(text(await call("discover_tool", { query: member.hidden[0]!.replace(/-/g, " ") })));
  expect(found.length).toBeGreaterThan(0);
  // Only tools the member sees, and (a line of servers not loaded yet) the lazy server it may load.
  expect(found.filter((name) => !mine.includes(name) && !(member.vault && name === "vault"))).toEqual([]);
  const echoed = await call("use_tool", { tool_name: "everything/echo", tool_input: { message: MARKER } });
  expect(text(echoed)).toBe(`Echo: ${MARKER}`);
  entries.push(made("tool_call", "meta", era, "everything/echo", "ok"));
  const refused = await call("use_tool", { tool_name: hidden, tool_input: { message: MARKER } });
  const missing = await call("use_tool", { tool_name: "everything/no-such-tool", tool_input: { message: MARKER } });
  expect((refused as { isError?: boolean }).isError).toBe(true);
  expect(text(refused)).toMatch(new RegExp(`^Unknown tool: "${hidden}"\\. Available tools \\(closest first\\): `));
  // The same answer as for a tool that exists nowhere: the closest of the tools the member sees, none it does not.
  expectSuggested(text(refused), mine);
  expectSuggested(text(missing), mine);
  entries.push(made("tool_call", "meta", era, hidden, "denied"), made("tool_call", "meta", era, "everything/no-such-tool", "unknown_tool"));
}

/** A member's whole tour, the entries each call it made should leave in the audit trail. */
async function tour(member: Member, host: HostProvider): Promise<Made[]> {
  const entries: Made[] = [];
  const token = host.stored!.access_token;
  const mine = visible(member).map((t) => `everything/${t}`);
  const withVault = member.vault ? [...mine, ...EVERYTHING.map((t) => `vault/${t}`)].sort() : mine;
  const hiddenName = member.hidden[0]!;

  const meta = await connectClient(mcpUrl(), token);
  const metaCall: Call = (name, args) => meta.client.callTool({ name, arguments: args });
  const metaList = async () => (await meta.client.listTools()).tools.find((t) => t.name === "discover_tool")!.description!;
  await metaChecks(member, "2025", metaCall, metaList, entries);
  const loaded = (await metaCall("load_mcp", { mcp_name: "vault" })) as { isError?: boolean };
  expect(Boolean(loaded.isError)).toBe(!member.vault);
  entries.push(made("load", "meta", "2025", "vault", member.vault ? "ok" : "denied"));
  expect(catalogOf(await metaList()).tools).toEqual(withVault);
  const vaultEcho = await metaCall("use_tool", { tool_name: "vault/echo", tool_input: { message: MARKER } });
  if (member.vault) expect(text(vaultEcho)).toBe(`Echo: ${MARKER}`);
  else expectSuggested(text(vaultEcho), mine);
  entries.push(made("tool_call", "meta", "2025", "vault/echo", member.vault ? "ok" : "denied"));
  await meta.client.close();

  const direct = await connectClient(mcpUrl("?view=direct"), token);
  const directNames = withVault.map((name) => name.replace("/", "__")).sort();
  expect((await direct.client.listTools()).tools.map((t) => t.name).sort()).toEqual(directNames);
  expect(text(await direct.client.callTool({ name: "everything__echo", arguments: { message: MARKER } }))).toBe(`Echo: ${MARKER}`);
  const directHidden = await direct.client.callTool({ name: `everything__${hiddenName}`, arguments: { message: MARKER } });
  expect(text(directHidden)).toMatch(new RegExp(`^Unknown tool: "everything__${hiddenName}"\\. Available tools \\(closest first\\): `));
  expectSuggested(text(directHidden), directNames);
  entries.push(made("tool_call", "direct", "2025", "everything/echo", "ok"), made("tool_call", "direct", "2025", `everything/${hiddenName}`, "denied"));
  if (!member.vault) {
    expectSuggested(text(await direct.client.callTool({ name: "vault__echo", arguments: { message: MARKER } })), directNames);
    entries.push(made("tool_call", "direct", "2025", "vault/echo", "denied"));
  }
  await direct.client.close();

  const code = await connectClient(mcpUrl("?view=code"), token);
  await codeChecks(member, "2025", (name, args) => code.client.callTool({ name, arguments: args }), async () => (await code.client.listTools()).tools.map((t) => t.name), entries);
  await code.client.close();

  const modernMeta = await modern(host);
  await metaChecks(member, "2026", (name, args) => modernMeta.callTool({ name, arguments: args }), async () => (await modernMeta.listTools()).tools.find((t) => t.name === "discover_tool")!.description!, entries);
  await modernMeta.close();

  const modernCode = await modern(host, "?view=code");
  await codeChecks(member, "2026", (name, args) => modernCode.callTool({ name, arguments: args }), async () => (await modernCode.listTools()).tools.map((t) => t.name), entries);
  await modernCode.close();
  return entries;
}

/** The code view of either era: its namespaces and declarations, a search, a program calling a visible and a hidden tool. */
async function codeChecks(member: Member, era: string, call: Call, list: () => Promise<string[]>, entries: Made[]): Promise<void> {
  const mine = visible(member).map(codeName);
  const hidden = codeName(member.hidden[0]!);
  expect(await list()).toEqual(["search", "describe", "execute"]);
  expect(text(await call("describe", { path: "nowhere" }))).toMatch(new RegExp(`The namespaces are: ${member.vault ? "everything, vault" : "everything"}\\.$`));
  expect(methodsOf(text(await call("describe", { path: "everything" })))).toEqual(mine);
  expect(text(await call("describe", { path: `everything.${hidden}` }))).toMatch(/^Unknown tool/);
  const found = hitNames(text(await call("search", { query: member.hidden[0]!.replace(/-/g, " ") })));
  expect(found.length).toBeGreaterThan(0);
  const allowed = [...mine.map((m) => `everything.${m}`), ...(member.vault ? EVERYTHING.map((t) => `vault.${codeName(t)}`) : [])];
  expect(found.filter((name) => !allowed.includes(name))).toEqual([]);
  const ran = await call("execute", { code: `return await everything.echo({ message: ${JSON.stringify(MARKER)} });` });
  expect(text(ran)).toContain(`Echo: ${MARKER}`);
  entries.push(made("tool_call", "code", era, "everything/echo", "ok"));
  const refused = await call("execute", { code: `return await everything.${hidden}({ message: ${JSON.stringify(MARKER)} });` });
  expect((refused as { isError?: boolean }).isError).toBe(true);
  expect(text(refused)).toMatch(new RegExp(`^The program failed \\(error\\) at line 1:\\d+: Unknown tool: "everything\\.${hidden}"\\. Available tools \\(closest first\\): `));
  // Its suggestions are the member's own tools, with none of the tools hidden from it.
  const suggested = suggestions(text(refused).split("\n")[0]!.replace(/^The program failed \(error\) at line 1:\d+: /, ""));
  expect(suggested.length).toBeGreaterThan(0);
  expect(suggested.filter((path) => !allowed.includes(path))).toEqual([]);
  entries.push(made("tool_call", "code", era, `everything/${member.hidden[0]}`, "denied"));
  if (!member.vault) {
    const elsewhere = await call("execute", { code: `return await vault.echo({ message: ${JSON.stringify(MARKER)} });` });
    expect(text(elsewhere)).toMatch(/vault is not defined \(the namespaces are: everything\)/);
  }
}

interface Entry {
  kind: string;
  view?: string;
  era?: string;
  tool: string;
  outcome: string;
  principal: { kind: string; id: string; label?: string; email?: string };
  client?: { name: string };
}

const audit = async (query: string): Promise<Entry[]> => {
  const res = await fetch(`${base()}/admin/teams/${TEAM}/audit?limit=1000&${query}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { entries: Entry[] }).entries;
};
const asMade = (entries: Entry[]) => entries.map((e) => made(e.kind, e.view ?? "-", e.era ?? "-", e.tool, e.outcome)).sort();

describe("tool policies for signed-in members through wrangler dev", () => {
  it("shows two members of different groups exactly their catalogs in every view and both eras, at once; the audit trail holds every call, denials included, and no argument", async () => {
    const hosts = await Promise.all(MEMBERS.map(signIn));
    const expected = await Promise.all(MEMBERS.map((member, i) => tour(member, hosts[i]!)));
    // The admin's two writes that set up the sign-in are in the trail too.
    const admin = [made("admin", "-", "-", "admin/oauth.put", "ok"), made("admin", "-", "-", "admin/secret.put", "ok")];
    const total = admin.length + expected.reduce((n, e) => n + e.length, 0);
    let all: Entry[] = [];
    // Entries reach the team's trail in batches: read until every call's is there (the comparisons say what is not).
    await waitFor(async () => (all = await audit("")).length >= total, { tries: 100, ms: 100 });
    expect(asMade(all)).toEqual([...admin, ...expected.flat()].sort());

    for (const [i, member] of MEMBERS.entries()) {
      const mine = await audit(`principal=${encodeURIComponent(member.account.email)}`);
      expect(asMade(mine)).toEqual(expected[i]!.sort());
      const id = mine[0]!.principal.id;
      expect(mine.every((e) => e.principal.kind === "member" && e.principal.email === member.account.email && e.principal.id === id)).toBe(true);
      expect(id).not.toContain("@");
      // The member's pseudonymous id selects the same entries.
      expect(asMade(await audit(`principal=${id}`))).toEqual(asMade(mine));
      const denied = await audit(`principal=${encodeURIComponent(member.account.email)}&outcome=denied`);
      expect(asMade(denied)).toEqual(expected[i]!.filter((e) => e.endsWith(" denied")).sort());
    }
    const echoes = await audit("tool=everything/echo");
    expect(echoes.map((e) => `${e.principal.email} ${e.view} ${e.era} ${e.outcome}`).sort()).toEqual(
      MEMBERS.flatMap((m) => ["code 2025", "code 2026", "direct 2025", "meta 2025", "meta 2026"].map((v) => `${m.account.email} ${v} ok`)).sort(),
    );
    expect(asMade(await audit("tool=vault/*"))).toEqual(expected.flat().filter((e) => / vault(\/echo)? /.test(e)).sort());
    expect(await audit("principal=nobody@example.com")).toEqual([]);

    // No argument anywhere: not in the entries, their export, or any line wrangler printed (its audit lines included).
    const ndjson = await (await fetch(`${base()}/admin/teams/${TEAM}/audit?limit=1000&format=ndjson`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(ndjson.trim().split("\n")).toHaveLength(total);
    expect(await waitFor(() => (stack.proxy.output().match(/"event":"audit"/g) ?? []).length >= total, { tries: 50, ms: 100 })).toBe(true);
    for (const seen of [JSON.stringify(all), ndjson, stack.proxy.output()]) {
      expect(seen).not.toContain(MARKER);
      // Nor a member's groups.
      expect(seen).not.toMatch(/contractors|"staff"/);
    }
  });
});
