// Pure: turns raw JSON into the normalized config the session uses, or a list of readable errors.
import { z } from "zod";
import { MultiConfig, SECRET_REF, SingleConfig, type ServerEntry } from "./schema.ts";

/** One enabled upstream, as the session sees it. */
export interface UpstreamSpec {
  name: string;
  /** "sse" is the older HTTP+SSE transport; everything else is streamable HTTP. */
  transport: "streamable-http" | "sse";
  url: string;
  headers: Record<string, string>;
  description?: string;
  timeout: number;
  /** Tool-name globs: only `allow`ed, never `deny`ed tools are offered. */
  tools?: { allow?: string[]; deny?: string[] };
}

export type ConfigMode = "multi" | "single";

export interface ResolvedConfig {
  mode: ConfigMode;
  /** Enabled upstreams in config order. */
  upstreams: UpstreamSpec[];
  /** Withhold tools whose definition changed since first seen, until an admin approves. */
  pinTools?: boolean;
  /** Entries of a stored config that no longer validate (edited behind the team command's back): shown, not served. */
  invalid?: Array<{ name: string; reason: string }>;
}

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

/** The name single-MCP mode gives its one upstream inside the proxy (never shown in tool names). */
export const SINGLE_UPSTREAM = "mcp";

/** Parses either config shape: an object with an `mcp` key is config-file mode, anything else single-MCP mode. */
export function parseConfig(raw: unknown): ConfigResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return failed([{ path: "(root)", message: "the config must be a JSON object" }]);
  }
  if ("mcp" in raw) {
    const parsed = MultiConfig.safeParse(raw);
    if (!parsed.success) return failed(formatIssues(parsed.error));
    const upstreams = Object.entries(parsed.data.mcp)
      .filter(([, entry]) => entry.enabled)
      .map(([name, entry]) => toSpec(name, entry));
    return { ok: true, config: withPins({ mode: "multi", upstreams }, parsed.data.pin_tools) };
  }
  const parsed = SingleConfig.safeParse(raw);
  if (!parsed.success) return failed(formatIssues(parsed.error));
  const { $schema: _schema, pin_tools, ...entry } = parsed.data;
  const upstreams = entry.enabled ? [toSpec(SINGLE_UPSTREAM, entry)] : [];
  return { ok: true, config: withPins({ mode: "single", upstreams }, pin_tools) };
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
    const one = MultiConfig.safeParse({ mcp: { [name]: entry } });
    if (one.success) {
      const parsed = one.data.mcp[name];
      if (parsed?.enabled) upstreams.push(toSpec(name, parsed));
    } else {
      invalid.push({ name: safeName(name), reason: formatIssues(one.error).map((i) => i.message).join("; ") });
    }
  }
  const pin = (raw as { pin_tools?: unknown }).pin_tools === true;
  return { ok: true, config: { ...withPins({ mode: "multi", upstreams }, pin), invalid } };
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

function toSpec(name: string, entry: ServerEntry): UpstreamSpec {
  const transport = entry.transport === "sse" ? "sse" : "streamable-http";
  const spec: UpstreamSpec = { name, transport, url: entry.url, headers: entry.headers, timeout: entry.timeout };
  if (entry.description !== undefined) spec.description = entry.description;
  if (entry.tools) spec.tools = entry.tools;
  return spec;
}

function withPins(config: ResolvedConfig, pin: boolean): ResolvedConfig {
  return pin ? { ...config, pinTools: true } : config;
}

/** One issue per problem, with its JSON path (`mcp.github.transport`) and a message that says what to do. */
export function formatIssues(error: z.ZodError): ConfigIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join(".") : "(root)";
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
