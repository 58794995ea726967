// Three projects: pure unit tests in Node, integration tests inside workerd, end-to-end tests against `wrangler dev`.
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" },
      },
      {
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Low enough that a test can reach it with one token; every other test uses its own tokens.
              ratelimits: { TOKEN_LIMITER: { namespace_id: "1001", simple: { limit: 150, period: 60 } } },
              bindings: {
                SESSION_KEY: "test-session-key-not-secret",
                SECRETS_KEY: "test-secrets-key-not-secret-0123456789",
                ADMIN_TOKEN: "test-admin-token",
                ALLOW_PRIVATE_UPSTREAMS: "true",
                TOKEN_CACHE_SECONDS: "0",
                // Code mode's wall limit per program: short, so a test of a hung program ends in seconds.
                CODE_WALL_MS: "2000",
                ALLOWED_ORIGINS: "https://app.example",
                EVERYTHING_URL: inject<string>("everythingUrl"),
                EVERYTHING_SSE_URL: inject<string>("everythingSseUrl"),
                REPLAY_BASE: inject<string>("replayBase"),
                DEAD_URL: inject<string>("deadUrl"),
                MODERN_URL: inject<string>("modernUrl"),
                LEGACY_INPUT_URL: inject<string>("legacyInputUrl"),
                IDP_ISSUER: inject<string>("idpIssuer"),
                IDP_CLIENT_ID: inject<string>("idpClientId"),
                IDP_CLIENT_SECRET: inject<string>("idpClientSecret"),
                OAUTH_UPSTREAM_URL: inject<string>("oauthUpstreamUrl"),
                OAUTH_UPSTREAM_CONTROL: inject<string>("oauthUpstreamControl"),
                OAUTH_UPSTREAM_CLIENT_ID: inject<string>("oauthUpstreamClientId"),
                OAUTH_UPSTREAM_CLIENT_SECRET: inject<string>("oauthUpstreamClientSecret"),
                ECHO_MODERN_URL: inject<string>("echoModernUrl"),
                ECHO_LEGACY_URL: inject<string>("echoLegacyUrl"),
                // The audit load test's length: short in the suite, a minute for the figure in BENCHMARKS.md.
                AUDIT_LOAD_SECONDS: process.env.AUDIT_LOAD_SECONDS ?? "3",
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          globalSetup: ["test/fixtures/global-setup.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
