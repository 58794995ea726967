// Config validation, the published JSON Schema, and what may be shown of a config.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { configJsonSchema } from "../../src/config/json-schema.ts";
import { credentialWarnings, maskHeaderValue, redactConfig } from "../../src/config/redact.ts";
import { parseConfig, parseConfigText } from "../../src/config/validate.ts";

const errorsOf = (raw: unknown): string[] => {
  const r = parseConfig(raw);
  if (r.ok) throw new Error("expected the config to be rejected");
  return r.errors;
};

describe("config-file mode", () => {
  it("normalizes entries: http is streamable-http, defaults filled, disabled entries dropped, order kept", () => {
    const r = parseConfig({
      mcp: {
        b: { transport: "http", url: "https://b.example/mcp" },
        a: { transport: "streamable-http", url: "https://a.example/mcp", headers: { "X-Key": "${secret:K}" }, timeout: 0 },
        off: { url: "https://off.example/mcp", enabled: false },
        lazy: { url: "https://l.example/mcp", description: "  Searches docs.  " },
        legacy: { transport: "sse", url: "https://s.example/sse" },
      },
    });
    expect(r).toEqual({
      ok: true,
      config: {
        mode: "multi",
        upstreams: [
          { name: "b", transport: "streamable-http", url: "https://b.example/mcp", headers: {}, timeout: 30000 },
          { name: "a", transport: "streamable-http", url: "https://a.example/mcp", headers: { "X-Key": "${secret:K}" }, timeout: 0 },
          { name: "lazy", transport: "streamable-http", url: "https://l.example/mcp", headers: {}, timeout: 30000, description: "Searches docs." },
          { name: "legacy", transport: "sse", url: "https://s.example/sse", headers: {}, timeout: 30000 },
        ],
      },
    });
  });

  it("refuses stdio with the way out, naming the entry", () => {
    const errors = errorsOf({ mcp: { fs: { transport: "stdio", command: "npx", args: ["x"] } } });
    expect(errors[0]).toMatch(/^mcp\.fs\.transport: stdio servers cannot run at the edge: run it behind a stdio-to-HTTP bridge/);
    expect(errors.join("\n")).toContain('mcp.fs: unknown keys "command", "args"');
  });

  it("names unknown transports, bad URLs, unknown keys, bad names and bad values", () => {
    expect(errorsOf({ mcp: { x: { transport: "websocket", url: "https://x.example" } } })).toEqual([
      'mcp.x.transport: unknown transport "websocket": use "streamable-http" (or its other spelling "http"), or "sse" for the older HTTP+SSE transport',
    ]);
    expect(errorsOf({ mcp: { x: { url: "not a url" } } })[0]).toMatch(/^mcp\.x\.url: a valid http\(s\) URL is required/);
    expect(errorsOf({ mcp: { x: { url: "ftp://x.example" } } })[0]).toMatch(/^mcp\.x\.url:/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", tiemout: 5 } } })).toEqual(['mcp.x: unknown key "tiemout"']);
    expect(errorsOf({ mcp: { "bad name": { url: "https://x.example" } } })[0]).toMatch(/^mcp\.bad name: server names are/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", timeout: -1 } } })[0]).toMatch(/^mcp\.x\.timeout:/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", description: "   " } } })[0]).toMatch(/^mcp\.x\.description: a description cannot be empty/);
    expect(errorsOf({ mcp: { x: { url: "https://x.example", headers: { "Bad Header": "v" } } } })[0]).toMatch(/not a valid HTTP header name/);
    expect(errorsOf({ mcp: {}, extra: 1 })).toEqual(['(root): unknown key "extra"']);
  });
});

describe("single-MCP mode", () => {
  it("takes one entry at the top level", () => {
    expect(parseConfig({ $schema: "x", transport: "http", url: "https://one.example/mcp" })).toEqual({
      ok: true,
      config: { mode: "single", upstreams: [{ name: "mcp", transport: "streamable-http", url: "https://one.example/mcp", headers: {}, timeout: 30000 }] },
    });
  });

  it("refuses a description, since it has no load_mcp", () => {
    expect(errorsOf({ url: "https://one.example/mcp", description: "lazy" })).toEqual([
      "description: single-MCP mode has no load_mcp, so its entry cannot be lazy: remove description",
    ]);
  });
});

describe("malformed input", () => {
  it("reports JSON syntax errors and non-objects", () => {
    const r = parseConfigText("{ nope");
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors[0]).toMatch(/^\(root\): not valid JSON/);
    expect(errorsOf([])).toEqual(["(root): the config must be a JSON object"]);
    expect(errorsOf(null)).toEqual(["(root): the config must be a JSON object"]);
  });
});

describe("published JSON Schema", () => {
  it("is committed exactly as generated from the zod schema (run npm run schema)", () => {
    expect(JSON.parse(readFileSync("config.schema.json", "utf8"))).toEqual(configJsonSchema());
  });

  it("the example configs validate", () => {
    for (const file of ["examples/config-file.json", "examples/single.json"]) {
      expect(parseConfigText(readFileSync(file, "utf8")).ok, file).toBe(true);
    }
  });
});

describe("reading a config back", () => {
  it("keeps secret references and masks literal values", () => {
    expect(maskHeaderValue("Bearer ${secret:GH}")).toBe("Bearer ${secret:GH}");
    expect(maskHeaderValue("${secret:A}:${secret:B}")).toBe("${secret:A}***${secret:B}");
    expect(maskHeaderValue("Bearer ghp_live_value")).toBe("***");
    expect(maskHeaderValue("token-${secret:A}-suffix")).toBe("***${secret:A}***");
    expect(maskHeaderValue("")).toBe("");
    const raw = { mcp: { a: { url: "https://a.example", headers: { Authorization: "Bearer sk-1234567890", "X-Ref": "${secret:K}" } } } };
    expect(redactConfig(raw)).toEqual({
      mcp: { a: { url: "https://a.example", headers: { Authorization: "***", "X-Ref": "${secret:K}" } } },
    });
    expect(JSON.stringify(redactConfig(raw))).not.toContain("sk-1234567890");
  });

  it("warns about literal credentials but not about references or plain values", () => {
    const warnings = credentialWarnings({
      mcp: {
        a: { headers: { Authorization: "Bearer abcdefgh12345", "X-Region": "eu", "X-Api-Key": "${secret:K}" } },
        b: { headers: { "X-Anything": "ghp_0123456789abcdef" } },
      },
    });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^mcp\.a\.headers\.Authorization: the value looks like a credential/);
    expect(warnings[1]).toMatch(/^mcp\.b\.headers\.X-Anything:/);
  });
});
