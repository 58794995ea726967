// The bindings the integration tests see: the Worker's own, plus the loopback upstreams started by global-setup.
declare namespace Cloudflare {
  type ProxyEnv = import("../../src/lib/env.ts").Env;
  interface Env extends ProxyEnv {
    EVERYTHING_URL: string;
    EVERYTHING_SSE_URL: string;
    REPLAY_BASE: string;
    DEAD_URL: string;
    MODERN_URL: string;
    LEGACY_INPUT_URL: string;
    IDP_ISSUER: string;
    IDP_CLIENT_ID: string;
    IDP_CLIENT_SECRET: string;
    OAUTH_UPSTREAM_URL: string;
    OAUTH_UPSTREAM_CONTROL: string;
    OAUTH_UPSTREAM_CLIENT_ID: string;
    OAUTH_UPSTREAM_CLIENT_SECRET: string;
    ECHO_MODERN_URL: string;
    ECHO_LEGACY_URL: string;
    /** Seconds the audit load test offers entries for (3 in the suite; `AUDIT_LOAD_SECONDS=60` for the figure). */
    AUDIT_LOAD_SECONDS: string;
  }
  interface GlobalProps {
    mainModule: typeof import("../../src/index.ts");
    durableNamespaces: "SessionObject";
  }
}
