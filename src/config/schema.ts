// The team config: one zod schema, from which the types, the validation, the normalized upstream spec the session
// uses (a `.transform` of the entry) and the published JSON Schema come.
import * as z from "zod";
import { View } from "./view.ts";
import { DashboardAdmins, Policies, policyGlobIssues } from "./policy-rules.ts";
import { ToolGlobs } from "./tool-globs.ts";

/** Team names appear in URLs and storage keys: lowercase letters, digits, `-` and `_`. */
export const TeamName = z
  .string()
  .regex(/^[a-z0-9_-]{1,64}$/, "team names are 1–64 lowercase letters, digits, '-' or '_'");
export type TeamName = z.infer<typeof TeamName>;

/** Upstream server names become the namespace of their tools (`server/tool`). */
export const ServerName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "server names are 1–64 letters, digits, '_' or '-'");

const STDIO_HINT =
  "stdio servers cannot run at the edge: run it behind a stdio-to-HTTP bridge " +
  '(e.g. `npx supergateway --stdio "<command>" --outputTransport streamableHttp`) ' +
  'and configure the bridge\'s URL with "transport": "streamable-http"';

const Transport = z
  .enum(["streamable-http", "http", "sse"], {
    error: (issue) =>
      issue.input === "stdio"
        ? STDIO_HINT
        : `unknown transport ${JSON.stringify(issue.input)}: use "streamable-http" (or its other spelling "http"), or "sse" for the older HTTP+SSE transport`,
  })
  .default("streamable-http")
  .describe(
    'How the proxy talks to the server: "streamable-http" ("http" is another spelling), or "sse" for servers that still speak the older HTTP+SSE transport.',
  );

const UpstreamUrl = z
  .url({
    protocol: /^https?$/,
    error: "a valid http(s) URL is required, e.g. https://mcp.example.com/mcp",
  })
  .describe("The server's streamable-HTTP MCP endpoint.");

/**
 * A `${secret:NAME}` reference inside a header value. Global: `matchAll` and `replace` take it as it is (both
 * leave its lastIndex alone), so there is no need to clone it.
 */
export const SECRET_REF = /\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;

/** The names of the secrets a header value references, each once, in order of appearance. */
export function secretNames(value: string): string[] {
  return [...new Set(Array.from(value.matchAll(SECRET_REF), (m) => m[1]!))];
}

/** Header names the proxy uses between its own parts (the upstream client tells its fetch chain things by them). */
const RESERVED_HEADER_PREFIX = "x-dynmcp-";

const Headers = z
  .record(
    z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "not a valid HTTP header name")
      .refine((name) => !name.toLowerCase().startsWith(RESERVED_HEADER_PREFIX), `headers named ${RESERVED_HEADER_PREFIX}… are the proxy's own`),
    z.string().refine((v) => !/[\r\n\0]/.test(v), "header values cannot contain line breaks"),
  )
  .default({})
  .describe("Headers sent to this server only. Reference team secrets as ${secret:NAME}.");

/** Tool-name globs (`*` any run of characters, `?` one); a hidden tool is unknown everywhere. */
const ToolFilter = z
  .strictObject({
    allow: ToolGlobs.optional().describe("Only tools matching one of these globs are offered."),
    deny: ToolGlobs.optional().describe("Tools matching any of these globs are hidden (deny wins)."),
  })
  .describe("Which of this server's tools the team may see and call.");

/** A scope token as OAuth allows it (RFC 6749 3.3). */
const ScopeToken = z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, "a scope is printable ASCII without spaces, quotes or backslashes");

/** A whole-value `${secret:NAME}` reference (a client secret is never written into a config). */
const SecretRefValue = z.string().regex(/^\$\{secret:[A-Za-z_][A-Za-z0-9_]{0,63}\}$/, "a reference to a team secret: ${secret:NAME}");

/**
 * An upstream that wants OAuth (docs/oauth.md 3.3): the proxy discovers the server's authorization server
 * from its 401, registers itself (or uses the configured client) and keeps the tokens, encrypted, per team and account.
 */
const UpstreamAuth = z
  .strictObject({
    type: z.literal("oauth"),
    mode: z
      .enum(["shared", "per_user"])
      .describe(
        '"shared": an admin connects one account (npm run team -- oauth connect) and every member\'s calls use it; ' +
          '"per_user": each signed-in member connects their own account the first time a call needs it.',
      ),
    scopes: z.array(ScopeToken).min(1).max(20).optional().describe("Scopes to ask for; by default those the server's 401 or metadata names."),
    client: z
      .strictObject({
        id: z.string().min(1).max(512).describe("A client id registered at the server's authorization server."),
        secret: SecretRefValue.optional().describe("Its secret, as ${secret:NAME}; absent for a public client."),
      })
      .optional()
      .describe("A pre-registered client; without it the proxy registers itself (client metadata document or dynamic registration)."),
  })
  .describe("Sign in to this server with OAuth instead of static headers.");

/** The fields of one upstream entry (single-MCP mode spreads them into the config itself). */
const SERVER_FIELDS = {
  transport: Transport,
  url: UpstreamUrl,
  headers: Headers,
  description: z
    .string()
    .trim()
    .min(1, "a description cannot be empty: remove it to connect the server eagerly")
    .max(1000)
    .optional()
    .describe(
      "Makes the server lazy (dynamic discovery): not connected until the agent calls load_mcp. " +
        "Say what the server does and when to load it.",
    ),
  enabled: z.boolean().default(true).describe("false skips the entry."),
  tools: ToolFilter.optional(),
  timeout: z
    .number()
    .int()
    .min(0)
    .max(600_000)
    .default(30_000)
    .describe(
      "Upstream request timeout in milliseconds; 0 disables it for requests. Connecting, notifications and ending the upstream session are bounded by it too (by 30000 when it is 0).",
    ),
  auth: UpstreamAuth.optional(),
  validate_arguments: z
    .boolean()
    .default(true)
    .describe(
      "Check each call's arguments against the tool's inputSchema before it goes to this server; a mismatch is answered to the agent (invalid_arguments) and never sent. false sends arguments unchecked: for a server whose schemas do not say what it accepts.",
    ),
};

/** Rules across an entry's fields: OAuth owns the Authorization header, and needs the streamable-HTTP transport. */
function authRules(entry: { auth?: unknown; headers: Record<string, string>; transport: string }, ctx: z.RefinementCtx): void {
  if (entry.auth === undefined) return;
  if (Object.keys(entry.headers).some((h) => h.toLowerCase() === "authorization")) {
    ctx.addIssue({ code: "custom", path: ["headers"], message: "an entry with auth sends its own Authorization header: remove this one" });
  }
  if (entry.transport === "sse") {
    ctx.addIssue({ code: "custom", path: ["auth"], message: "OAuth upstreams need the streamable-HTTP transport" });
  }
}

/** One upstream MCP server. Unknown keys are refused so typos do not pass silently. */
export const ServerEntry = z.strictObject(SERVER_FIELDS).superRefine(authRules);
export type ServerEntry = z.infer<typeof ServerEntry>;

/**
 * A validated entry as the session uses it: the transport's two spellings made one, `enabled` dropped (disabled
 * entries are left out before), a description or tool filter only when given. The key order is part of the
 * contract: a reload compares the stored and the new spec as JSON.
 */
export function normalizeEntry(entry: Omit<ServerEntry, "enabled">) {
  return {
    /** "sse" is the older HTTP+SSE transport; everything else is streamable HTTP. */
    transport: entry.transport === "sse" ? ("sse" as const) : ("streamable-http" as const),
    url: entry.url,
    headers: entry.headers,
    timeout: entry.timeout,
    ...(entry.description !== undefined ? { description: entry.description } : {}),
    /** Tool-name globs: only `allow`ed, never `deny`ed tools are offered. */
    ...(entry.tools ? { tools: entry.tools } : {}),
    /** OAuth instead of static credentials (docs/oauth.md 3.3). */
    ...(entry.auth ? { auth: entry.auth } : {}),
    /** Arguments go unchecked (only when turned off, so a spec stored before the setting reads the same). */
    ...(entry.validate_arguments === false ? { validate_arguments: false as const } : {}),
  };
}

/** One entry, parsed and normalized: the session's spec of an upstream comes from here (its name is the entry's key). */
export const UpstreamEntry = ServerEntry.transform(normalizeEntry);

const SchemaRef = z.string().optional().describe("Editors' JSON Schema reference; ignored by the proxy.");

const PinTools = z
  .boolean()
  .default(false)
  .describe(
    "Record each tool's definition the first time it is seen; a tool whose definition later changes is withheld until an admin approves it.",
  );

/** At most this many tools are promoted: each costs its whole definition in every session's context. */
export const MAX_PROMOTED = 20;

const Promote = z
  .array(z.string().min(1).max(200))
  .max(MAX_PROMOTED)
  .optional()
  .describe(
    "Tools shown to hosts first-class, with their full definitions, beside the meta-tools, and called directly by these names (`server/tool` in config-file mode, bare in single-MCP mode): the few an agent uses all the time. Each costs its whole definition in every session's context; a name no loaded server offers is left out.",
  );

/** The catalog budget when a config sets none, and the least and most one may set (tokens of the whole tools/list). */
export const CATALOG_BUDGET = { default: 1500, min: 600, max: 200_000 } as const;

const CatalogBudget = z
  .number()
  .int()
  .min(CATALOG_BUDGET.min, `catalog_budget is at least ${CATALOG_BUDGET.min} tokens: the meta-tools alone take about 400`)
  .max(CATALOG_BUDGET.max)
  .default(CATALOG_BUDGET.default)
  .describe(
    "The most tokens (o200k_base) a session's tools/list may cost a host: the meta-tools, promoted tools and discover_tool's catalog together. While the whole catalog fits it is shown whole; past that, the largest servers are shown by tool names only, then as one summary line each, then counted in a line that says to search. In the code view it bounds search, describe and execute, whose description names the namespaces the same way.",
  );

const TeamView = View.optional().describe(
  'The view sessions get when neither the MCP URL (`?view=`) nor the token names one: "meta" (discover_tool, use_tool, load_mcp; the default), "direct" (every allowed tool first-class) or "code" (search, describe, execute: one program calls many tools in a sandbox).',
);

const Approve = ToolGlobs.optional()
  .describe(
    "Code view: tools a program may call only once the user allows that call, as globs over the tool's name or `server/tool` (`*delete*`, `github/*`). The host asks the user (elicitation) where it can; elsewhere the program pauses and the agent resumes it with the user's consent.",
  );

const ApproveDestructive = z
  .boolean()
  .default(false)
  .describe("Code view: also ask before every call of a tool its server annotates `destructiveHint: true`.");

/** How long a team's audit trail keeps entries when its config sets none, and the least and most it may set. */
export const AUDIT_DAYS = { default: 30, min: 1, max: 3650 } as const;

const Audit = z
  .strictObject({
    days: z.number().int().min(AUDIT_DAYS.min).max(AUDIT_DAYS.max).default(AUDIT_DAYS.default).describe("Days the team's audit trail keeps an entry (default 30)."),
    hash_arguments: z
      .boolean()
      .default(false)
      .describe("Record a SHA-256 of each call's arguments (canonical JSON) in its entry; the arguments themselves are never recorded."),
  })
  .optional()
  .describe("The audit trail of every tool call, load and admin action (never arguments, results or secrets): how long it is kept, and whether calls carry a hash of their arguments.");

/** The semantic stages a team's search may use (README, "Choosing the semantic search"). */
export const SEMANTIC_STAGES = ["off", "static", "workers-ai"] as const;
export const SemanticStage = z.enum(SEMANTIC_STAGES, {
  error: `search.semantic is one of ${SEMANTIC_STAGES.map((s) => JSON.stringify(s)).join(", ")}`,
});
export type SemanticStage = z.infer<typeof SemanticStage>;

/**
 * The stage of a team whose config names none, read when a session starts (so a new default reaches every such team):
 * on while it lifts the holdout's hit@1 and keeps its hit@5 at a cost within 2 ms a search (BENCHMARKS.md).
 */
export const SEMANTIC_DEFAULT: SemanticStage = "static";

const Search = z
  .strictObject({
    semantic: SemanticStage.optional().describe(
      'How discover_tool and the code view\'s search read a query\'s meaning beside its words: "off" (words only, BM25F), "static" (a small embedding model shipped with the Worker: offline, about a millisecond a search) or "workers-ai" (a Workers AI embedding model: better, a remote call a search; the static model where the binding is absent). Absent: the deployment\'s default.',
    ),
  })
  .optional()
  .describe("The tool search of discover_tool and the code view's search.");

/** What a team config holds in either mode besides its servers. */
const TEAM_FIELDS = {
  $schema: SchemaRef,
  pin_tools: PinTools,
  promote: Promote,
  catalog_budget: CatalogBudget,
  view: TeamView,
  approve: Approve,
  approve_destructive: ApproveDestructive,
  policies: Policies,
  dashboard_admins: DashboardAdmins,
  audit: Audit,
  search: Search,
};

/** Config-file mode: many servers, tools namespaced as `server/tool`. */
export const MultiConfig = z
  .strictObject({
    ...TEAM_FIELDS,
    mcp: z.record(ServerName, ServerEntry).describe("The upstream servers, by name."),
  })
  .superRefine((config, ctx) => policyGlobIssues(config.policies, new Set(Object.keys(config.mcp)), ctx));

/** Single-MCP mode: the config is one server entry; tool names stay bare. */
export const SingleConfig = z.strictObject({
  ...TEAM_FIELDS,
  ...SERVER_FIELDS,
  description: z
    .never({ error: "single-MCP mode has no load_mcp, so its entry cannot be lazy: remove description" })
    .optional(),
}).superRefine(authRules);

/** The team config as stored in KV: either shape. */
export const TeamConfig = z.union([MultiConfig, SingleConfig]);
export type TeamConfig = z.input<typeof TeamConfig>;
