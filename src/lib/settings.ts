// The Worker's string settings (env vars), parsed once per env object by one zod schema into typed values with
// their defaults. Secrets (SESSION_KEY, SECRETS_KEY, ADMIN_TOKEN) are not part of it: nothing here can leak them.
import * as z from "zod";

/** Defaults (the body reader and the token cache use these; the upstream gate's own constant equals its one, as test/unit/settings.test.ts checks). */
export const SETTING_DEFAULTS = {
  upstreamIdleSeconds: 120,
  sessionTtlSeconds: 24 * 3600,
  tokenCacheSeconds: 30,
  maxBodyBytes: 4 * 1024 * 1024,
  maxUpstreamResponseBytes: 8 * 1024 * 1024,
  /** Code mode (docs/code-mode.md): one execute's wall time, its CPU time (enforced when deployed), tool calls, answer and console output. */
  codeWallMs: 30_000,
  codeCpuMs: 5_000,
  codeMaxCalls: 50,
  codeMaxResultBytes: 64 * 1024,
  codeMaxLogBytes: 16 * 1024,
  /**
   * Live sessions one principal (a token, or a signed-in member across their grants) may hold in a team: 2025 sessions
   * and 2026-era objects alike. Sized from bench/session-cost.ts (BENCHMARKS.md, "Sessions per principal").
   */
  maxSessionsPerPrincipal: 20,
  /** 2026-era listen streams one principal may hold open in its team's index, and how long one lasts at most. */
  listenStreamsPerPrincipal: 10,
  listenStreamMaxSeconds: 1800,
} as const;

/**
 * A numeric setting: a finite number of at least `min`, else `fallback` (unset, empty, garbage, or out of range,
 * which would otherwise turn every request away: MAX_BODY_BYTES=-1 must not answer every POST with 413).
 */
const numberSetting = (fallback: number, min = 0) =>
  z
    .string()
    .trim()
    .min(1)
    .pipe(z.coerce.number<string>().refine(Number.isFinite).min(min))
    .catch(fallback);

/**
 * Env var → typed setting. Unknown keys (bindings, secrets) are dropped by the parse. The origin and address
 * rules (ALLOWED_ORIGINS, PUBLIC_URL, ALLOW_PRIVATE_UPSTREAMS) are read by edge/mcp/origin.ts and lib/url-policy.ts,
 * which the CLI shares.
 */
export const SettingsSchema = z
  .object({
    UPSTREAM_IDLE_SECONDS: numberSetting(SETTING_DEFAULTS.upstreamIdleSeconds),
    SESSION_TTL_SECONDS: numberSetting(SETTING_DEFAULTS.sessionTtlSeconds),
    TOKEN_CACHE_SECONDS: numberSetting(SETTING_DEFAULTS.tokenCacheSeconds),
    MAX_BODY_BYTES: numberSetting(SETTING_DEFAULTS.maxBodyBytes, 1),
    MAX_UPSTREAM_RESPONSE_BYTES: numberSetting(SETTING_DEFAULTS.maxUpstreamResponseBytes, 1),
    /** "off" turns 2026-07-28 requests away (as an unsupported version: clients fall back to 2025 sessions). */
    MODERN_ERA: z.string().trim().toLowerCase().pipe(z.enum(["on", "off"])).catch("on"),
    /**
     * "on" (the default): hosts may sign members in through OAuth (each team's authorization server, its metadata,
     * the 401's `resource_metadata`), and its access tokens are accepted beside team tokens; "off": team tokens only
     * (docs/oauth.md). Needs the OAUTH_KV binding either way.
     */
    OAUTH_HOSTS: z.string().trim().toLowerCase().pipe(z.enum(["on", "off"])).catch("on"),
    /**
     * "on" (the default): sessions may take the code view (`?view=code`: search, describe, execute; docs/code-mode.md),
     * given the LOADER binding; "off": asking for it is a 400.
     */
    CODE_MODE: z.string().trim().toLowerCase().pipe(z.enum(["on", "off"])).catch("on"),
    /**
     * "on" (the default): every program gets checkpoints, so its CPU limit holds where the platform keeps none
     * (local workerd) and async code yields the thread; "off": programs run as written (Cloudflare's CPU limit still
     * holds there; locally an endless loop freezes every request). The benchmark's baseline (docs/code-mode.md 5.5).
     */
    CODE_CHECKPOINTS: z.string().trim().toLowerCase().pipe(z.enum(["on", "off"])).catch("on"),
    CODE_WALL_MS: numberSetting(SETTING_DEFAULTS.codeWallMs, 1),
    CODE_CPU_MS: numberSetting(SETTING_DEFAULTS.codeCpuMs, 1),
    CODE_MAX_CALLS: numberSetting(SETTING_DEFAULTS.codeMaxCalls, 1),
    CODE_MAX_RESULT_BYTES: numberSetting(SETTING_DEFAULTS.codeMaxResultBytes, 1),
    CODE_MAX_LOG_BYTES: numberSetting(SETTING_DEFAULTS.codeMaxLogBytes, 0),
    MAX_SESSIONS_PER_PRINCIPAL: numberSetting(SETTING_DEFAULTS.maxSessionsPerPrincipal, 1),
    LISTEN_STREAMS_PER_PRINCIPAL: numberSetting(SETTING_DEFAULTS.listenStreamsPerPrincipal, 1),
    LISTEN_STREAM_MAX_SECONDS: numberSetting(SETTING_DEFAULTS.listenStreamMaxSeconds, 1),
  })
  .transform((s) => ({
    upstreamIdleSeconds: s.UPSTREAM_IDLE_SECONDS,
    sessionTtlSeconds: s.SESSION_TTL_SECONDS,
    tokenCacheSeconds: s.TOKEN_CACHE_SECONDS,
    maxBodyBytes: s.MAX_BODY_BYTES,
    maxUpstreamResponseBytes: s.MAX_UPSTREAM_RESPONSE_BYTES,
    modernEra: s.MODERN_ERA === "on",
    oauthHosts: s.OAUTH_HOSTS === "on",
    codeMode: s.CODE_MODE === "on",
    codeCheckpoints: s.CODE_CHECKPOINTS === "on",
    code: {
      wallMs: s.CODE_WALL_MS,
      cpuMs: s.CODE_CPU_MS,
      maxCalls: Math.floor(s.CODE_MAX_CALLS),
      maxResultBytes: s.CODE_MAX_RESULT_BYTES,
      maxLogBytes: s.CODE_MAX_LOG_BYTES,
      // A call's arguments from a program are held to what a host's use_tool body may carry.
      maxArgBytes: s.MAX_BODY_BYTES,
    },
    maxSessionsPerPrincipal: Math.floor(s.MAX_SESSIONS_PER_PRINCIPAL),
    listen: { perPrincipal: Math.floor(s.LISTEN_STREAMS_PER_PRINCIPAL), lifetimeMs: s.LISTEN_STREAM_MAX_SECONDS * 1000 },
  }));
export type Settings = z.output<typeof SettingsSchema>;

/** The settings part of the env (the Worker's `Env` is one): strings only, the schema's input. */
export type SettingsInput = Partial<Record<keyof z.input<typeof SettingsSchema>, string | undefined>>;

const cache = new WeakMap<object, Settings>();

/** The env's settings, parsed on first use and cached per env object (never per request). Never throws. */
export function settings(env: SettingsInput): Settings {
  let parsed = cache.get(env);
  if (!parsed) {
    // Only the schema's keys are read; every field falls back on its own, so this parse cannot fail.
    parsed = SettingsSchema.parse(env);
    cache.set(env, parsed);
  }
  return parsed;
}

/** Whether sessions may take the code view here: CODE_MODE on, and the binding that loads its sandboxes present. */
export const codeModeAvailable = (env: SettingsInput & { LOADER?: unknown }): boolean => settings(env).codeMode && env.LOADER !== undefined;
