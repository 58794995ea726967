// The team config's `policies` (src/config/policy-rules.ts): what passes, and each kind of nonsense refused with a
// message that names the rule and the field, as `team check`, `team put` and the admin API show it.
import { describe, expect, it } from "vitest";
import { parseConfig, parseStoredConfig } from "../../src/config/validate.ts";
import { TeamStore } from "../../src/store/store.ts";
import type { KvLike } from "../../src/store/kv.ts";

const MCP = {
  github: { url: "https://github.example/mcp" },
  everything: { url: "https://everything.example/mcp" },
  secrets: { url: "https://secrets.example/mcp" },
  billing: { url: "https://billing.example/mcp", enabled: false },
};

const ISSUE_RULES = [
  { who: ["*"], deny: ["*/delete_*"], approve: ["github/merge_*"] },
  { who: ["token:ci-bot"], allow: ["github/get_*", "github/list_*", "everything/echo"] },
  { who: ["group:contractors", "domain:partner.example"], deny: ["secrets/*", "billing/*"] },
];

const errorsOf = (raw: unknown): string[] => {
  const r = parseConfig(raw);
  if (r.ok) throw new Error("expected the config to be rejected");
  return r.errors;
};

/** The errors of a config-file mode config with these policies. */
const policyErrors = (policies: unknown) => errorsOf({ mcp: MCP, policies });

describe("policies that pass", () => {
  it("keeps the issue's three rules as written, in order, in the normalized config", () => {
    const r = parseConfig({ mcp: MCP, policies: ISSUE_RULES });
    expect(r.ok && r.config.policies).toEqual(ISSUE_RULES);
  });

  it("takes every selector kind, negations, ** and patterns over server names", () => {
    const r = parseConfig({
      mcp: MCP,
      policies: [
        { who: ["user:Alice@Example.COM", "domain:EXAMPLE.com", "token:ci bot", "token:3f9c2a", "group:Eng: Platform"], allow: ["**"] },
        { who: ["*"], deny: ["!github/get_*", "{github,everything}/x", "*/*"], approve: ["github/*"] },
      ],
    });
    expect(r.ok, r.ok ? "" : r.errors.join("\n")).toBe(true);
  });

  it("reads globs over bare names in single-MCP mode", () => {
    const r = parseConfig({ url: "https://one.example/mcp", policies: [{ who: ["token:ci"], allow: ["get_*"], deny: ["delete_*"] }] });
    expect(r.ok && r.config.policies).toEqual([{ who: ["token:ci"], allow: ["get_*"], deny: ["delete_*"] }]);
  });

  it("leaves policies out of a config that has none (today's behaviour)", () => {
    const r = parseConfig({ mcp: MCP });
    expect(r.ok && "policies" in r.config).toBe(false);
    const empty = parseConfig({ mcp: MCP, policies: [] });
    expect(empty.ok && "policies" in empty.config).toBe(false);
  });
});

describe("policies refused, by rule and field", () => {
  const KINDS = '"*" (everyone), token:<label or id>, user:<email>, domain:<email domain>, group:<name>';

  it.each([
    ["an unknown selector kind", [{ who: ["*"], deny: ["github/x"] }, { who: ["team:ops"], deny: ["github/*"] }], [`policies[1].who[0]: unknown selector kind "team:": use ${KINDS}`]],
    ["a selector with no kind", [{ who: ["*", "alice"], deny: ["github/*"] }], [`policies[0].who[1]: unknown selector "alice": use ${KINDS}`]],
    ["an empty selector", [{ who: [""], deny: ["github/*"] }], [`policies[0].who[0]: a selector cannot be empty: use ${KINDS}`]],
    ["an empty who", [{ who: [], deny: ["github/*"] }], [`policies[0].who: who is empty, so the rule is for nobody: name whom it is for (${KINDS})`]],
    ["no who", [{ deny: ["github/*"] }], ["policies[0].who: Invalid input: expected array, received undefined"]],
    ["a rule that does nothing", [{ who: ["*"] }], ["policies[0]: the rule does nothing: give it allow, deny or approve"]],
    ["an empty list", [{ who: ["*"], allow: [] }], ["policies[0].allow: allow is empty: list globs, or remove allow"]],
    ["an unknown key", [{ who: ["*"], alow: ["github/*"], deny: ["github/x"] }], ['policies[0]: unknown key "alow"']],
    ["user: without an address", [{ who: ["user:alice"], deny: ["github/*"] }], ['policies[0].who[0]: user: takes an email address, e.g. user:alice@example.com: "user:alice"']],
    ["domain: with the @", [{ who: ["domain:@partner.example"], deny: ["github/*"] }], ['policies[0].who[0]: domain: takes the part after the @, e.g. domain:example.com: "domain:@partner.example"']],
    ["domain: not a domain", [{ who: ["domain:partner"], deny: ["github/*"] }], ['policies[0].who[0]: domain: takes an email domain, e.g. domain:example.com: "domain:partner"']],
    ["token: with spaces around", [{ who: ["token: ci"], deny: ["github/*"] }], [expect.stringMatching(/^policies\[0\]\.who\[0\]: token: takes a token's label \(team token --label\) or its id/)]],
    ["group: empty", [{ who: ["group:"], deny: ["github/*"] }], [expect.stringMatching(/^policies\[0\]\.who\[0\]: group: takes a group name/)]],
    ["an empty glob", [{ who: ["*"], deny: [""] }], [expect.stringMatching(/^policies\[0\]\.deny\[0\]: /)]],
    [
      "a glob without server/ can never match",
      [{ who: ["*"], approve: ["github/merge_*"] }, { who: ["*"], deny: ["github/x", "delete_*"] }],
      ['policies[1].deny[1]: "delete_*" can never match: tools are named server/tool here and * does not cross /; write "*/delete_*" for every server\'s tools'],
    ],
    ["a glob naming no server", [{ who: ["token:ci-bot"], allow: ["gihub/get_*"] }], ['policies[0].allow[0]: "gihub/get_*" can never match: no server is named "gihub" under mcp']],
    ["not a list", { who: ["*"] }, ["policies: Invalid input: expected array, received object"]],
  ])("%s", (_what, policies, errors) => {
    expect(policyErrors(policies)).toEqual(errors);
  });

  it("names every problem at once", () => {
    expect(policyErrors([{ who: ["team:x"], deny: ["nope"] }, { who: [] }]).map((e) => e.slice(0, e.indexOf(":"))).sort()).toEqual([
      "policies[0].deny[0]",
      "policies[0].who[0]",
      "policies[1]",
      "policies[1].who",
    ]);
  });

  it("gives list items of other keys their index the same way", () => {
    expect(errorsOf({ mcp: MCP, promote: [""] })).toEqual([expect.stringMatching(/^promote\[0\]: /)]);
    expect(errorsOf({ mcp: { a: { url: "https://a.example/mcp", tools: { deny: [""] } } } })).toEqual([expect.stringMatching(/^mcp\.a\.tools\.deny\[0\]: /)]);
  });
});

describe("stored policies", () => {
  it("are kept as they are when the rest of a stored config is broken", () => {
    const r = parseStoredConfig({ mcp: { ...MCP, broken: { url: "ftp://x" } }, policies: ISSUE_RULES });
    expect(r.ok && r.config.policies).toEqual(ISSUE_RULES);
  });

  it("hide everything from everyone when they are broken, rather than show what they meant to hide", () => {
    const r = parseStoredConfig({ mcp: { ...MCP, broken: { url: "ftp://x" } }, policies: [{ who: ["team:x"], deny: ["secrets/*"] }] });
    expect(r.ok && r.config.policies).toEqual([{ who: ["*"], deny: ["**"] }]);
  });
});

describe("team put and the admin API", () => {
  it("refuse bad policies with the same paths, and store nothing", async () => {
    const data = new Map<string, string>();
    const kv: KvLike = { get: async (k) => data.get(k) ?? null, put: async (k, v) => void data.set(k, v), delete: async (k) => void data.delete(k), list: async () => [] };
    const store = new TeamStore(kv, { urlPolicy: { allowPrivate: false } });
    const refused = await store.putConfig("acme", { mcp: MCP, policies: [{ who: ["*"], deny: ["*/delete_*"] }, { who: ["group:"], allow: ["github/get_*"] }] });
    expect(refused).toEqual({ ok: false, issues: [{ path: "policies[1].who[0]", message: expect.stringMatching(/^group: takes a group name/) }] });
    expect(data.size).toBe(0);
    expect(await store.putConfig("acme", { mcp: MCP, policies: ISSUE_RULES })).toMatchObject({ ok: true });
  });
});
