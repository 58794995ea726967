// The team setting `search: { semantic }`: its values, the clear error of a bad one, absent as the deployment's
// default (read at use, not written into the config), a stored config's broken value read as absent, and the
// published JSON Schema naming it.
import { describe, expect, it } from "vitest";
import { configJsonSchema } from "../../src/config/json-schema.ts";
import { SEMANTIC_DEFAULT } from "../../src/config/schema.ts";
import { parseConfig, parseStoredConfig } from "../../src/config/validate.ts";

const multi = (extra: object) => ({ mcp: { github: { url: "https://api.example.com/mcp" } }, ...extra });
const single = (extra: object) => ({ url: "https://api.example.com/mcp", ...extra });

describe("search.semantic", () => {
  it("takes off, static and workers-ai in both modes", () => {
    for (const semantic of ["off", "static", "workers-ai"] as const) {
      for (const raw of [multi({ search: { semantic } }), single({ search: { semantic } })]) {
        const r = parseConfig(raw);
        expect(r.ok && r.config.semantic).toBe(semantic);
      }
    }
  });

  it("is absent when the config names none: the deployment's default applies at use", () => {
    for (const raw of [multi({}), multi({ search: {} }), single({})]) {
      const r = parseConfig(raw);
      expect(r.ok && "semantic" in r.config).toBe(false);
    }
    expect(["off", "static", "workers-ai"]).toContain(SEMANTIC_DEFAULT);
  });

  it("refuses another value or key, saying where and what the values are", () => {
    const bad = parseConfig(multi({ search: { semantic: "on" } }));
    expect(bad.ok ? [] : bad.errors).toEqual(['search.semantic: search.semantic is one of "off", "static", "workers-ai"']);
    const key = parseConfig(multi({ search: { semantics: "off" } }));
    expect(key.ok ? [] : key.errors).toEqual(['search: unknown key "semantics"']);
  });

  it("reads a stored config's broken value as absent, its servers still served", () => {
    const stored = parseStoredConfig(multi({ search: { semantic: 7 }, mcp: { github: { url: "https://api.example.com/mcp" }, bad: { url: 5 } } }));
    expect(stored.ok && [stored.config.upstreams.map((u) => u.name), "semantic" in stored.config]).toEqual([["github"], false]);
    const kept = parseStoredConfig(multi({ search: { semantic: "off" }, mcp: { github: { url: "https://api.example.com/mcp" }, bad: { url: 5 } } }));
    expect(kept.ok && kept.config.semantic).toBe("off");
  });

  it("is in the published JSON Schema with its three values", () => {
    const text = JSON.stringify(configJsonSchema());
    expect(text).toContain('"enum":["off","static","workers-ai"]');
  });
});
