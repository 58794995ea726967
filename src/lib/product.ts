// The product's name and version, as the proxy tells its clients and upstreams and as its documents name it: in a
// module of its own so the build scripts can read it without the Worker's types (src/lib/env.ts).
export const PRODUCT = { name: "dynmcp-edge", version: "0.1.0" } as const;
