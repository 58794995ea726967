// Pure: turns raw JSON into the normalized config the session uses, or a list of readable errors. The normalized
// shapes are not written by hand: they are the output of the schema's transforms (`UpstreamEntry` in schema.ts,
// `ResolvedMulti` and `ResolvedSingle` here), and their types are inferred from them.
import * as z from "zod";
import { View } from "./view.ts";
import { CATALOG_BUDGET, MultiConfig, SemanticStage, ServerEntry, ServerName, SingleConfig, UpstreamEntry, normalizeEntry } from "./schema.ts";
import { Policies, type PolicyRule } from "./policy-rules.ts";

/** The name single-MCP mode gives its one upstream inside the proxy (never shown in tool names). */
export const SINGLE_UPSTREAM = "mcp";

/** One enabled upstream, as the session sees it: the entry's key, then its normalized entry. */
export type UpstreamSpec = { name: string } & z.output<typeof UpstreamEntry>;

const spec = (name: string, entry: Omit<ServerEntry, "enabled">): UpstreamSpec => ({ name, ...normalizeEntry(entry) });

function resolved<M extends "multi" | "single">(
  mode: M,
  upstreams: UpstreamSpec[],
  pin: boolean,
  promote: string[] | undefined,
  catalogBudget: number,
  view: View | undefined,
  approve: ApprovalRule = { globs: [], destructive: false },
  policies: PolicyRule[] | undefined = undefined,
  audit?: AuditSettings,
  semantic?: SemanticStage,
) {
  return {
    mode,
    /** The search's semantic stage the config names (absent: the deployment's SEMANTIC_DEFAULT, read at use). */
    ...(semantic ? { semantic } : {}),
    /** How long the team's audit trail keeps entries, and whether they carry a hash of the arguments (absent: the defaults). */
    ...(audit ? { audit } : {}),
    /** The view of sessions whose URL and token name none. */
    ...(view ? { view } : {}),
    /** Code view: which tools a program calls only with the user's consent. */
    ...(approve.globs.length > 0 || approve.destructive ? { approve } : {}),
    /** Who may see which tools and which calls wait for consent (decided by tool-access.ts). */
    ...(policies?.length ? { policies } : {}),
    /** The most tokens a session's tools/list may cost a host. */
    catalogBudget,
    /** Enabled upstreams in config order. */
    upstreams,
    /** Withhold tools whose definition changed since first seen, until an admin approves. */
    ...(pin ? { pinTools: true as const } : {}),
    /** Tools exposed first-class beside the meta-tools, by the names hosts call them. */
    ...(promote?.length ? { promote: [...new Set(promote)] } : {}),
  };
}

/** Code view: tools whose calls from a program need the user's consent (globs over `tool` or `server/tool`, and destructive ones). */
export interface ApprovalRule {
  globs: string[];
  destructive: boolean;
}

/** The config's `audit`, normalized (absent from the config: absent here, and the defaults apply). */
export interface AuditSettings {
  days: number;
  hashArguments: boolean;
}

const auditSettings = (audit: { days: number; hash_arguments: boolean } | undefined): AuditSettings | undefined =>
  audit ? { days: audit.days, hashArguments: audit.hash_arguments } : undefined;

const approvalRule = (globs: string[] | undefined, destructive: boolean): ApprovalRule => ({ globs: globs ?? [], destructive });

/** Config-file mode, normalized: the enabled entries in config order, each named by its key. */
const ResolvedMulti = MultiConfig.transform((config) =>
  resolved(
    "multi",
    Object.entries(config.mcp).flatMap(([name, entry]) => (entry.enabled ? [spec(name, entry)] : [])),
    config.pin_tools,
    config.promote,
    config.catalog_budget,
    config.view,
    approvalRule(config.approve, config.approve_destructive),
    config.policies,
    auditSettings(config.audit),
    config.search?.semantic,
  ),
);

/** Single-MCP mode, normalized: its one entry (when enabled) named SINGLE_UPSTREAM. */
const ResolvedSingle = SingleConfig.transform(({ $schema: _schema, pin_tools, promote, catalog_budget, view, approve, approve_destructive, policies, audit, search, dashboard_admins: _admins, ...entry }) =>
  resolved("single", entry.enabled ? [spec(SINGLE_UPSTREAM, entry)] : [], pin_tools, promote, catalog_budget, view, approvalRule(approve, approve_destructive), policies, auditSettings(audit), search?.semantic),
);

export type ConfigMode = "multi" | "single";

export type ResolvedConfig = (z.output<typeof ResolvedMulti> | z.output<typeof ResolvedSingle>) & {
  /** Entries of a stored config that no longer validate (edited behind the team command's back): shown, not served. */
  invalid?: Array<{ name: string; reason: string }>;
};

/** A stored config's promoted names read on their own (lenient reading: a broken list promotes nothing). */
const PromoteNames = MultiConfig.shape.promote;
/** A stored config's budget read on its own (lenient reading: a broken one is the default). */
const Budget = MultiConfig.shape.catalog_budget.catch(CATALOG_BUDGET.default);
/** A stored config's approval globs read on their own. */
const StoredApprove = MultiConfig.shape.approve;
/**
 * A stored config's policies read on their own. A broken list must not show anyone what it meant to hide: it hides
 * every tool from everyone until the config is put right.
 */
const StoredPolicies = Policies.catch([{ who: ["*"], deny: ["**"] }]);
const StoredAudit = MultiConfig.shape.audit;
/** A stored config's semantic stage read on its own (lenient reading: a broken one is the default). */
const StoredSemantic = SemanticStage.optional().catch(undefined);
/** A stored config's view read on its own (lenient reading: a broken one is none). */
const StoredView = View.optional().catch(undefined);

/** The team's default view of a stored config (parsed JSON), read as a session reads it: a broken one is none. */
export const storedView = (raw: unknown): View | undefined =>
  typeof raw === "object" && raw !== null ? StoredView.parse((raw as { view?: unknown }).view) : undefined;

/** One stored entry read on its own (lenient reading): its key must be a server name, its value an entry. */
const OneEntry = z.record(ServerName, ServerEntry);

/** One problem of a config: where (JSON path, `(root)` for the whole) and what. */
export interface ConfigIssue {
  path: string;
  message: string;
}

export type ConfigResult =
  | { ok: true; config: ResolvedConfig }
  | { ok: false; issues: ConfigIssue[]; errors: string[] };

const failed = (issues: ConfigIssue[]): ConfigResult => ({
  ok: false,
  issues,
  errors: issues.map((i) => `${i.path}: ${i.message}`),
});

/** Parses either config shape: an object with an `mcp` key is config-file mode, anything else single-MCP mode. */
export function parseConfig(raw: unknown): ConfigResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return failed([{ path: "(root)", message: "the config must be a JSON object" }]);
  }
  const parsed = "mcp" in raw ? ResolvedMulti.safeParse(raw) : ResolvedSingle.safeParse(raw);
  return parsed.success ? { ok: true, config: parsed.data } : failed(formatIssues(parsed.error));
}

/**
 * For a config already stored: what can be served is served. In config-file mode each entry is judged on its
 * own, so one broken entry does not take the others down; it is listed in `invalid` with its reasons instead.
 * Only a config with nothing servable fails.
 */
export function parseStoredConfig(raw: unknown): ConfigResult {
  const strict = parseConfig(raw);
  if (strict.ok || typeof raw !== "object" || raw === null || !("mcp" in raw)) return strict;
  const entries = (raw as { mcp?: unknown }).mcp;
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) return strict;
  const upstreams: UpstreamSpec[] = [];
  const invalid: Array<{ name: string; reason: string }> = [];
  for (const [name, entry] of Object.entries(entries)) {
    const one = OneEntry.safeParse({ [name]: entry });
    if (one.success) {
      const parsed = one.data[name];
      if (parsed?.enabled) upstreams.push(spec(name, parsed));
    } else {
      invalid.push({ name: safeName(name), reason: formatIssues(one.error).map((i) => i.message).join("; ") });
    }
  }
  const pin = (raw as { pin_tools?: unknown }).pin_tools === true;
  const promote = PromoteNames.safeParse((raw as { promote?: unknown }).promote);
  const budget = Budget.parse((raw as { catalog_budget?: unknown }).catalog_budget);
  const view = storedView(raw);
  // A broken approval list must not let calls through unasked: it asks before every call of a program instead.
  const globs = StoredApprove.safeParse((raw as { approve?: unknown }).approve);
  const approve = approvalRule(globs.success ? globs.data : ["**"], (raw as { approve_destructive?: unknown }).approve_destructive === true);
  const policies = StoredPolicies.parse((raw as { policies?: unknown }).policies);
  // A broken audit setting keeps the defaults: entries are still written, for the default time.
  const audit = StoredAudit.safeParse((raw as { audit?: unknown }).audit);
  const kept = auditSettings(audit.success ? audit.data : undefined);
  const search = (raw as { search?: unknown }).search;
  const semantic = StoredSemantic.parse(typeof search === "object" && search !== null ? (search as { semantic?: unknown }).semantic : undefined);
  const config = resolved("multi", upstreams, pin, promote.success ? promote.data : undefined, budget, view, approve, policies, kept, semantic);
  return { ok: true, config: { ...config, invalid } };
}

/** An entry name from a broken config, shown safely (it may be anything). */
const safeName = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "?").slice(0, 64) || "?";

/** Parses JSON text first, so a syntax error reads as one too. */
export function parseConfigText(text: string): ConfigResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return failed([{ path: "(root)", message: `not valid JSON: ${(err as Error).message}` }]);
  }
  return parseConfig(raw);
}

/** A JSON path as messages show it: keys joined by `.`, list items by their index in brackets (`policies[1].who[0]`). */
const pathText = (path: readonly PropertyKey[]): string =>
  path.length ? path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i > 0 ? "." : ""}${String(key)}`)).join("") : "(root)";

/** One issue per problem, with its JSON path (`mcp.github.transport`) and a message that says what to do. */
export function formatIssues(error: z.ZodError): ConfigIssue[] {
  return error.issues.map((issue) => {
    const path = pathText(issue.path);
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(", ");
      const stdio = issue.keys.some((k) => k === "command" || k === "args" || k === "env");
      const hint = stdio ? " (stdio servers cannot run at the edge: put the command behind a stdio-to-HTTP bridge and give its url)" : "";
      return { path, message: `unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}${hint}` };
    }
    if (issue.code === "invalid_key") return { path, message: issue.issues[0]?.message ?? issue.message };
    return { path, message: issue.message };
  });
}
