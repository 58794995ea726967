// A member's tour of a team whose upstreams tell back the headers they were sent (harness/echo-upstream.ts): every
// view (meta, direct, code) as a 2025 host and as a 2026-07-28 host, every way text of an upstream's reaches a host
// (tool lists and definitions, search, describe, calls plain, refused and thrown, logs and progress, an upstream's
// questions, a program's results, resources, prompts, completions), each answer, error, relayed request and
// notification kept as text for the test to search. Shared by the workerd and the Node test projects (it imports only
// the v2 client SDK, which runs in both).
import { Client, StreamableHTTPClientTransport, type FetchLike } from "@modelcontextprotocol/client";

/** The team's secrets in the tests that take the tour (long enough to be withheld, with characters URLs encode). */
export const ECHO_SECRETS = { ECHO_KEY: "sk-echo+key/7f3a9c1e2b4d6f80", ECHO_TOKEN: "tok-echo-5e8d0a6b4c2f1937" } as const;
/** A literal header value that looks like a credential: withheld like a secret. */
export const LITERAL_CREDENTIAL = "lit-credential-0123456789abcdef";

/** The headers each echo entry of the team's config sends. */
export const ECHO_HEADERS = {
  "X-Api-Key": "${secret:ECHO_KEY}",
  Authorization: "Bearer ${secret:ECHO_TOKEN}",
  "X-Literal-Token": LITERAL_CREDENTIAL,
  "X-Region": "eu-west-1",
};

/** The team's config: a 2026 echo and a 2025 one, eager, and a lazy 2025 one a host loads. */
export function echoConfig(modernUrl: string, legacyUrl: string): Record<string, unknown> {
  return {
    mcp: {
      modern: { url: modernUrl, headers: ECHO_HEADERS },
      legacy: { url: legacyUrl, headers: ECHO_HEADERS },
      later: { url: legacyUrl, headers: ECHO_HEADERS, description: "Tells back what it was sent; load it to use it." },
    },
  };
}

/** What the tour's texts show of the upstreams' echoes: each credential header withheld, the region (no credential) as sent. */
export const ECHOED_LINES = ["x-api-key: [withheld]", "authorization: Bearer [withheld]", "x-literal-token: [withheld]", "x-region: eu-west-1"] as const;

/** The echoed lines a text lacks (empty when the upstreams' echoes all came back, withheld). */
export function missingEchoes(text: string): string[] {
  return ECHOED_LINES.filter((line) => !text.includes(line));
}

/** What each text must not hold: a secret as is, percent-encoded, or in the base64 of any text it is part of. */
export function leaksIn(text: string, values: readonly string[] = [...Object.values(ECHO_SECRETS), LITERAL_CREDENTIAL]): string[] {
  const found = new Set<string>();
  const decode = (run: string) => {
    try {
      return atob(run.replace(/-/g, "+").replace(/_/g, "/"));
    } catch {
      return "";
    }
  };
  for (const value of values) {
    if (text.includes(value)) found.add(value);
    if (text.includes(encodeURIComponent(value))) found.add(`percent-encoded ${value}`);
    for (const run of text.match(/[A-Za-z0-9+/_-]{16,}/g) ?? []) {
      for (const shift of ["", "A", "AA", "AAA"]) {
        const padded = shift + run;
        if (decode(padded.slice(0, padded.length - (padded.length % 4))).includes(value)) found.add(`base64 ${value}`);
      }
    }
  }
  return [...found];
}

/** What a host that keeps everything sees; `keep` runs a step and keeps its answer, or its failure's message. */
interface Seen {
  texts: string[];
  keep: (work: Promise<unknown>) => Promise<unknown>;
}

function seen(): Seen {
  const texts: string[] = [];
  return {
    texts,
    keep: async (work) => {
      try {
        const value = await work;
        texts.push(JSON.stringify(value));
        return value;
      } catch (err) {
        texts.push(err instanceof Error ? `${err.name}: ${err.message} ${JSON.stringify(err)}` : String(err));
        return undefined;
      }
    },
  };
}

/** A v2 client in the given era that answers every question of an upstream's and keeps it, and every notification. */
async function host(url: string, token: string, fetch: FetchLike, era: "legacy" | "modern", into: Seen): Promise<Client> {
  const client = new Client(
    { name: "echo-tour", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} }, sampling: {} }, versionNegotiation: { mode: era === "modern" ? "auto" : "legacy" } },
  );
  client.setRequestHandler("elicitation/create", async (request) => {
    into.texts.push(JSON.stringify(request));
    return { action: "accept", content: { ok: true } };
  });
  client.setRequestHandler("sampling/createMessage", async (request) => {
    into.texts.push(JSON.stringify(request));
    return { role: "assistant", content: { type: "text", text: "fine" }, model: "tour" };
  });
  client.fallbackNotificationHandler = async (notification) => void into.texts.push(JSON.stringify(notification));
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch, requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  if (client.getProtocolEra() !== era) throw new Error(`the tour's host speaks ${client.getProtocolEra()}, not ${era}`);
  return client;
}

const TOOLS = ["echo_headers", "echo_refusal", "echo_failure", "echo_log", "echo_ask"] as const;
const SERVERS = ["modern", "legacy"] as const;

/** Resources, templates, prompts and completions, as every view forwards them. */
async function forwarded(client: Client, s: Seen): Promise<void> {
  const resources = (await s.keep(client.listResources())) as { resources?: Array<{ uri: string }> } | undefined;
  for (const { uri } of resources?.resources ?? []) await s.keep(client.readResource({ uri }));
  await s.keep(client.listResourceTemplates());
  await s.keep(client.readResource({ uri: "echo://broken/x" }));
  const prompts = (await s.keep(client.listPrompts())) as { prompts?: Array<{ name: string }> } | undefined;
  for (const { name } of prompts?.prompts ?? []) {
    await s.keep(client.getPrompt({ name, arguments: name.includes("broken") ? {} : { topic: "t" } }));
    await s.keep(client.complete({ ref: { type: "ref/prompt", name }, argument: { name: "topic", value: "" } }));
  }
}

/** A program that calls every echo tool of both eager servers and the lazy one, and returns what they said. */
const PROGRAM = `
const out = [];
for (const ns of [modern, legacy, later]) {
  for (const tool of ${JSON.stringify(TOOLS)}) {
    try { out.push(await ns[tool]({})); } catch (err) { out.push(String(err && err.message)); }
  }
}
console.log(JSON.stringify(out[0]));
return out;`;

/** The code view: search, describe, a program. */
async function codeView(client: Client, s: Seen): Promise<void> {
  await s.keep(client.listTools());
  await s.keep(client.callTool({ name: "search", arguments: { query: "headers sent" } }));
  for (const path of ["modern", "legacy.echo_headers", "later"]) await s.keep(client.callTool({ name: "describe", arguments: { path, full: true } }));
  await s.keep(client.callTool({ name: "execute", arguments: { code: PROGRAM } }));
}

/** A 2025 host's session in one view. */
export async function legacyTour(url: (query: string) => string, token: string, fetch: FetchLike, view: "meta" | "direct" | "code"): Promise<string[]> {
  const s = seen();
  const client = await host(url(`?view=${view}`), token, fetch, "legacy", s);
  await s.keep(client.setLoggingLevel("debug"));
  if (view === "meta") {
    await s.keep(client.listTools());
    for (const server of SERVERS) {
      await s.keep(client.callTool({ name: "discover_tool", arguments: { tool_name: `${server}/echo_headers` } }));
      for (const tool of TOOLS) await s.keep(client.callTool({ name: "use_tool", arguments: { tool_name: `${server}/${tool}`, tool_input: {} } }, { onprogress: (p) => void s.texts.push(JSON.stringify(p)) }));
    }
    await s.keep(client.callTool({ name: "discover_tool", arguments: { query: "headers sent" } }));
    await s.keep(client.callTool({ name: "load_mcp", arguments: { mcp_name: "later" } }));
    await s.keep(client.callTool({ name: "use_tool", arguments: { tool_name: "later/echo_headers", tool_input: {} } }));
    await forwarded(client, s);
  } else if (view === "direct") {
    const listed = (await s.keep(client.listTools())) as { tools?: Array<{ name: string }> } | undefined;
    for (const { name } of listed?.tools ?? []) await s.keep(client.callTool({ name, arguments: {} }));
  } else {
    await codeView(client, s);
  }
  await client.close();
  return s.texts;
}

/** A 2026-07-28 host's requests in one view (the era serves meta and code). */
export async function modernTour(url: (query: string) => string, token: string, fetch: FetchLike, view: "meta" | "code"): Promise<string[]> {
  const s = seen();
  const client = await host(url(`?view=${view}`), token, fetch, "modern", s);
  if (view === "meta") {
    await s.keep(client.listTools());
    await s.keep(client.callTool({ name: "discover_tool", arguments: {} }));
    await s.keep(client.callTool({ name: "discover_tool", arguments: { query: "headers sent" } }));
    for (const server of SERVERS) {
      await s.keep(client.callTool({ name: "discover_tool", arguments: { tool_name: `${server}/echo_headers` } }));
      for (const tool of TOOLS) await s.keep(client.callTool({ name: "use_tool", arguments: { tool_name: `${server}/${tool}`, tool_input: {} } }));
    }
    const loaded = (await s.keep(client.callTool({ name: "load_mcp", arguments: { mcp_name: "later" } }))) as { structuredContent?: { toolset?: string } } | undefined;
    const toolset = loaded?.structuredContent?.toolset;
    await s.keep(client.callTool({ name: "use_tool", arguments: { tool_name: "later/echo_headers", tool_input: {}, ...(toolset ? { toolset } : {}) } }));
    await forwarded(client, s);
  } else {
    await codeView(client, s);
  }
  await client.close();
  return s.texts;
}
