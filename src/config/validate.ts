// Pure: turns raw JSON into the normalized config the session uses, or a list of readable errors.
import { z } from "zod";
import { MultiConfig, SingleConfig, type ServerEntry } from "./schema.ts";

/** One enabled upstream, as the session sees it. */
export interface UpstreamSpec {
  name: string;
  /** "sse" is the older HTTP+SSE transport; everything else is streamable HTTP. */
  transport: "streamable-http" | "sse";
  url: string;
  headers: Record<string, string>;
  description?: string;
  timeout: number;
}

export type ConfigMode = "multi" | "single";

export interface ResolvedConfig {
  mode: ConfigMode;
  /** Enabled upstreams in config order. */
  upstreams: UpstreamSpec[];
}

export type ConfigResult =
  | { ok: true; config: ResolvedConfig }
  | { ok: false; errors: string[] };

/** The name single-MCP mode gives its one upstream inside the proxy (never shown in tool names). */
export const SINGLE_UPSTREAM = "mcp";

/** Parses either config shape: an object with an `mcp` key is config-file mode, anything else single-MCP mode. */
export function parseConfig(raw: unknown): ConfigResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, errors: ["(root): the config must be a JSON object"] };
  }
  if ("mcp" in raw) {
    const parsed = MultiConfig.safeParse(raw);
    if (!parsed.success) return { ok: false, errors: formatIssues(parsed.error) };
    const upstreams = Object.entries(parsed.data.mcp)
      .filter(([, entry]) => entry.enabled)
      .map(([name, entry]) => toSpec(name, entry));
    return { ok: true, config: { mode: "multi", upstreams } };
  }
  const parsed = SingleConfig.safeParse(raw);
  if (!parsed.success) return { ok: false, errors: formatIssues(parsed.error) };
  const { $schema: _schema, ...entry } = parsed.data;
  const upstreams = entry.enabled ? [toSpec(SINGLE_UPSTREAM, entry)] : [];
  return { ok: true, config: { mode: "single", upstreams } };
}

/** Parses JSON text first, so a syntax error reads as one too. */
export function parseConfigText(text: string): ConfigResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [`(root): not valid JSON: ${(err as Error).message}`] };
  }
  return parseConfig(raw);
}

function toSpec(name: string, entry: ServerEntry): UpstreamSpec {
  const transport = entry.transport === "sse" ? "sse" : "streamable-http";
  const spec: UpstreamSpec = { name, transport, url: entry.url, headers: entry.headers, timeout: entry.timeout };
  if (entry.description !== undefined) spec.description = entry.description;
  return spec;
}

/** `mcp.github.transport: <message>` lines, one per issue, with the JSON path first. */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length ? issue.path.map(String).join(".") : "(root)";
    if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.map((k) => JSON.stringify(k)).join(", ");
      const stdio = issue.keys.some((k) => k === "command" || k === "args" || k === "env");
      return `${path}: unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}${
        stdio ? " (stdio servers cannot run at the edge: put the command behind a stdio-to-HTTP bridge and give its url)" : ""
      }`;
    }
    if (issue.code === "invalid_key") return `${path}: ${issue.issues[0]?.message ?? issue.message}`;
    return `${path}: ${issue.message}`;
  });
}
