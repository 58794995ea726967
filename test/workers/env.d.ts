// The bindings the integration tests see: the Worker's own, plus the loopback upstreams started by global-setup.
declare namespace Cloudflare {
  interface Env extends import("../../src/env.ts").Env {
    EVERYTHING_URL: string;
    REPLAY_BASE: string;
    DEAD_URL: string;
  }
}
