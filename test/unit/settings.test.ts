// The Worker's string settings, parsed once per env object by one zod schema.
import { describe, expect, it } from "vitest";
import { DEFAULT_BODY_LIMIT } from "../../src/lib/request-body.ts";
import { SETTING_DEFAULTS, SettingsSchema, codeModeAvailable, settings } from "../../src/lib/settings.ts";
import { DEFAULT_GATE_LIMITS } from "../../src/upstream/fetch-gate.ts";

describe("settings", () => {
  it("has every default when nothing is set", () => {
    expect(settings({})).toEqual({
      upstreamIdleSeconds: 120,
      sessionTtlSeconds: 86400,
      tokenCacheSeconds: 30,
      maxBodyBytes: 4 * 1024 * 1024,
      maxUpstreamResponseBytes: 8 * 1024 * 1024,
      modernEra: true,
      oauthHosts: true,
      codeMode: true,
      codeCheckpoints: true,
      code: { wallMs: 30_000, cpuMs: 5_000, maxCalls: 50, maxResultBytes: 64 * 1024, maxLogBytes: 16 * 1024, maxArgBytes: 4 * 1024 * 1024 },
      maxSessionsPerPrincipal: 20,
      listen: { perPrincipal: 10, lifetimeMs: 1_800_000 },
    });
  });

  it("reads the bounds per principal as whole numbers of at least one, the listen lifetime in seconds", () => {
    expect(settings({ MAX_SESSIONS_PER_PRINCIPAL: "5.7", LISTEN_STREAMS_PER_PRINCIPAL: "2", LISTEN_STREAM_MAX_SECONDS: "1.5" })).toMatchObject({
      maxSessionsPerPrincipal: 5,
      listen: { perPrincipal: 2, lifetimeMs: 1500 },
    });
    // Zero would refuse every session or stream: out of range, so the default.
    expect(settings({ MAX_SESSIONS_PER_PRINCIPAL: "0", LISTEN_STREAMS_PER_PRINCIPAL: "0", LISTEN_STREAM_MAX_SECONDS: "0" })).toMatchObject({
      maxSessionsPerPrincipal: SETTING_DEFAULTS.maxSessionsPerPrincipal,
      listen: { perPrincipal: SETTING_DEFAULTS.listenStreamsPerPrincipal, lifetimeMs: SETTING_DEFAULTS.listenStreamMaxSeconds * 1000 },
    });
  });

  it("turns code mode off only for \"off\", needs the loader binding, and keeps its limits in range", () => {
    expect(settings({ CODE_MODE: "OFF" }).codeMode).toBe(false);
    expect(settings({ CODE_MODE: "maybe" }).codeMode).toBe(true);
    expect(settings({ CODE_CHECKPOINTS: " Off" }).codeCheckpoints).toBe(false);
    expect(settings({ CODE_CHECKPOINTS: "no" }).codeCheckpoints).toBe(true);
    expect(codeModeAvailable({})).toBe(false);
    expect(codeModeAvailable({ LOADER: {} })).toBe(true);
    expect(codeModeAvailable({ LOADER: {}, CODE_MODE: "off" })).toBe(false);
    const limits = settings({ CODE_WALL_MS: "1500", CODE_MAX_CALLS: "0", CODE_MAX_LOG_BYTES: "0", CODE_MAX_RESULT_BYTES: "-5", CODE_CPU_MS: "x", MAX_BODY_BYTES: "1000" }).code;
    expect(limits).toEqual({ wallMs: 1500, cpuMs: 5_000, maxCalls: 50, maxResultBytes: 64 * 1024, maxLogBytes: 0, maxArgBytes: 1000 });
  });

  it("turns OAuth for hosts off only for \"off\" (any case)", () => {
    expect(settings({ OAUTH_HOSTS: "off" }).oauthHosts).toBe(false);
    expect(settings({ OAUTH_HOSTS: " Off" }).oauthHosts).toBe(false);
    expect(settings({ OAUTH_HOSTS: "on" }).oauthHosts).toBe(true);
    expect(settings({ OAUTH_HOSTS: "yes" }).oauthHosts).toBe(true);
  });

  it("turns the 2026 era off only for \"off\" (any case), and keeps it on for anything else", () => {
    expect(settings({ MODERN_ERA: "off" }).modernEra).toBe(false);
    expect(settings({ MODERN_ERA: " OFF " }).modernEra).toBe(false);
    expect(settings({ MODERN_ERA: "on" }).modernEra).toBe(true);
    expect(settings({ MODERN_ERA: "maybe" }).modernEra).toBe(true);
  });

  it("keeps its defaults equal to the constants of the parts that use them", () => {
    // The body reader keeps its own constant: the floor Worker of the latency benchmark uses it without zod.
    expect(SETTING_DEFAULTS.maxBodyBytes).toBe(DEFAULT_BODY_LIMIT);
    expect(SETTING_DEFAULTS.maxUpstreamResponseBytes).toBe(DEFAULT_GATE_LIMITS.maxResponseBytes);
  });

  it("reads numbers, with surrounding blanks", () => {
    const s = settings({ UPSTREAM_IDLE_SECONDS: " 30 ", SESSION_TTL_SECONDS: "3600", TOKEN_CACHE_SECONDS: "0", MAX_BODY_BYTES: "1024", MAX_UPSTREAM_RESPONSE_BYTES: "1e6" });
    expect(s).toMatchObject({ upstreamIdleSeconds: 30, sessionTtlSeconds: 3600, tokenCacheSeconds: 0, maxBodyBytes: 1024, maxUpstreamResponseBytes: 1_000_000 });
  });

  it("falls back to the default for empty, garbage and out-of-range values", () => {
    for (const bad of ["", "   ", "abc", "12abc", "NaN", "Infinity", "-Infinity"]) {
      expect(settings({ MAX_BODY_BYTES: bad, UPSTREAM_IDLE_SECONDS: bad }), bad).toMatchObject({
        maxBodyBytes: SETTING_DEFAULTS.maxBodyBytes,
        upstreamIdleSeconds: SETTING_DEFAULTS.upstreamIdleSeconds,
      });
    }
    // Below the minimum: a body limit under 1 byte would answer every POST with 413.
    expect(settings({ MAX_BODY_BYTES: "-1" }).maxBodyBytes).toBe(SETTING_DEFAULTS.maxBodyBytes);
    expect(settings({ MAX_BODY_BYTES: "0" }).maxBodyBytes).toBe(SETTING_DEFAULTS.maxBodyBytes);
    expect(settings({ MAX_UPSTREAM_RESPONSE_BYTES: "0" }).maxUpstreamResponseBytes).toBe(SETTING_DEFAULTS.maxUpstreamResponseBytes);
    expect(settings({ SESSION_TTL_SECONDS: "-5" }).sessionTtlSeconds).toBe(SETTING_DEFAULTS.sessionTtlSeconds);
    // 0 is in range where the minimum is 0 (a token cache of 0 s is off).
    expect(settings({ TOKEN_CACHE_SECONDS: "0" }).tokenCacheSeconds).toBe(0);
    // Each setting falls back on its own.
    expect(settings({ MAX_BODY_BYTES: "-1", SESSION_TTL_SECONDS: "60" })).toMatchObject({ maxBodyBytes: SETTING_DEFAULTS.maxBodyBytes, sessionTtlSeconds: 60 });
  });

  it("takes a value of the wrong type as unset", () => {
    expect(SettingsSchema.parse({ MAX_BODY_BYTES: 5, SESSION_TTL_SECONDS: true })).toMatchObject({
      maxBodyBytes: SETTING_DEFAULTS.maxBodyBytes,
      sessionTtlSeconds: SETTING_DEFAULTS.sessionTtlSeconds,
    });
  });

  it("parses once per env object and keeps no secret", () => {
    const env = { MAX_BODY_BYTES: "100", SESSION_KEY: "session-secret", SECRETS_KEY: "secrets-secret", ADMIN_TOKEN: "admin-secret" };
    const first = settings(env);
    expect(settings(env)).toBe(first);
    expect(settings({ ...env })).not.toBe(first);
    expect(JSON.stringify(first)).not.toMatch(/secret/);
    expect(Object.keys(first)).not.toContain("SESSION_KEY");
  });
});
