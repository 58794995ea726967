// The bundle check (scripts/check-bundle.ts): how it reads wrangler and esbuild, and what it refuses.
import { describe, expect, it } from "vitest";
import { BUDGET, packageOf, packagesOf, problemsOf, uploadLine } from "../../scripts/check-bundle.ts";

describe("check-bundle", () => {
  it("reads wrangler's upload line, and fails loudly without one", () => {
    expect(uploadLine("…\nTotal Upload: 1438.39 KiB / gzip: 308.99 KiB\n…")).toEqual({ kib: 1438.39, gzipKib: 308.99 });
    expect(() => uploadLine("✘ [ERROR] Build failed")).toThrow(/no "Total Upload" line/);
  });

  it("charges each input to its innermost package, our code to src/", () => {
    expect(packageOf("node_modules/@modelcontextprotocol/server/dist/index.mjs")).toBe("@modelcontextprotocol/server");
    expect(packageOf("node_modules/a/node_modules/zod/v4/core/schemas.js")).toBe("zod");
    expect(packageOf("src/session/transport.ts")).toBe("src/");
    expect(packageOf("wrangler-shim.js")).toBe("other");
    const meta = {
      outputs: {
        "index.js": {
          inputs: {
            "src/a.ts": { bytesInOutput: 1024 },
            "src/b.ts": { bytesInOutput: 1024 },
            "node_modules/hono/dist/x.js": { bytesInOutput: 512 },
          },
        },
      },
    };
    expect(packagesOf(meta)).toEqual([
      { name: "src/", kib: 2 },
      { name: "hono", kib: 0.5 },
    ]);
  });

  it("refuses a bundle over budget or holding a forbidden package, and passes a clean one", () => {
    const clean = { kib: 1000, gzipKib: 200, packages: [{ name: "src/", kib: 100 }] };
    expect(problemsOf(clean)).toEqual([]);
    expect(problemsOf({ ...clean, kib: BUDGET.kib + 1 })).toEqual([expect.stringContaining("over the budget")]);
    expect(problemsOf({ ...clean, gzipKib: BUDGET.gzipKib + 1 })).toEqual([expect.stringContaining("gzipped")]);
    expect(problemsOf({ ...clean, packages: [{ name: "agents", kib: 600 }, { name: "@modelcontextprotocol/sdk", kib: 240 }] })).toEqual([
      "bundle holds 240 KiB of @modelcontextprotocol/sdk, which the Worker must not carry",
      "bundle holds 600 KiB of agents, which the Worker must not carry",
    ]);
  });
});
