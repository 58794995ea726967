// The policy decision (src/config/tool-access.ts) as a table: who a rule selects, allow narrowing, deny winning,
// approval, rules combining, single-MCP mode, the top-level approval keys folded in, no policies. Each case names the
// rule that must decide, so an implementation that reaches the right answer for the wrong reason fails too.
import { describe, expect, it } from "vitest";
import type { PolicyRule } from "../../src/config/policy-rules.ts";
import type { Subject } from "../../src/config/subject.ts";
import { accessRules, toolAccess, type AccessConfig, type ToolAccess } from "../../src/config/tool-access.ts";

const ciBot: Subject = { kind: "token", id: "tok-1", label: "ci-bot" };
const ciBotTwin: Subject = { kind: "token", id: "tok-2", label: "ci-bot" };
const plainToken: Subject = { kind: "token", id: "tok-3" };
const contractor: Subject = { kind: "member", id: "acme.c", email: "carl@acme.example", groups: ["contractors", "staff"] };
const partner: Subject = { kind: "member", id: "acme.p", email: "pat@partner.example", groups: [] };
const partnerUpper: Subject = { kind: "member", id: "acme.q", email: "quinn@PARTNER.Example" };
const unverified: Subject = { kind: "member", id: "acme.u", groups: ["staff"] };
const labelledLikeGroup: Subject = { kind: "token", id: "tok-5", label: "contractors" };
const memberNamedLikeToken: Subject = { kind: "member", id: "ci-bot", groups: ["ci-bot"] };
const alice: Subject = { kind: "member", id: "acme.a", email: "alice@EXAMPLE.com" };
const aliceOtherCase: Subject = { kind: "member", id: "acme.b", email: "ALICE@example.com" };
const deployer: Subject = { kind: "token", id: "tok-8", label: "deploy" };
const deployerDenied: Subject = { kind: "token", id: "tok-9", label: "deploy" };

const multi = (policies?: PolicyRule[], approve?: AccessConfig["approve"]): AccessConfig => ({ mode: "multi", policies, approve });

/** The issue's three rules. */
const ISSUE = multi([
  { who: ["*"], deny: ["*/delete_*"], approve: ["github/merge_*"] },
  { who: ["token:ci-bot"], allow: ["github/get_*", "github/list_*", "everything/echo"] },
  { who: ["group:contractors", "domain:partner.example"], deny: ["secrets/*", "billing/*"] },
]);

/** Several rules for one caller: allow lists add up, deny beats allow and approve, approve within an allow. */
const COMBINED = multi([
  { who: ["token:deploy"], allow: ["github/*"], approve: ["github/deploy_*"] },
  { who: ["token:deploy"], allow: ["everything/echo"] },
  { who: ["user:alice@example.com"], deny: ["github/deploy_prod"] },
  { who: ["token:tok-9"], deny: ["github/deploy_*"] },
  // A policy's globs are over server/tool only: this one matches no tool name in config-file mode.
  { who: ["*"], approve: ["*delete*"] },
  { who: ["domain:Partner.EXAMPLE"], deny: ["everything/*"] },
]);

const SINGLE: AccessConfig = {
  mode: "single",
  policies: [
    { who: ["*"], deny: ["delete_*"] },
    { who: ["token:ci-bot"], allow: ["get_*", "merge_*"] },
  ],
  approve: { globs: ["*_pr"], destructive: true },
};

/** The top-level keys alone: globs over the bare name or server/tool, and destructive tools. */
const LEGACY = multi(undefined, { globs: ["*delete*", "github/merge_*"], destructive: true });

const NONE = multi();

type Case = [what: string, config: AccessConfig, subject: Subject, tool: string, access: ToolAccess, at?: string, index?: number, destructive?: boolean];

const CASES: Case[] = [
  ["nothing applies: visible, no rule", ISSUE, contractor, "github/get_issue", "visible"],
  ["deny for everyone", ISSUE, plainToken, "github/delete_repo", "hidden", "policies[0].deny", 0],
  ["deny for everyone holds for a narrowed token too", ISSUE, ciBot, "github/delete_repo", "hidden", "policies[0].deny", 0],
  ["approve for everyone", ISSUE, contractor, "github/merge_pr", "approve", "policies[0].approve", 0],
  ["token: by label, allowed", ISSUE, ciBot, "github/get_issue", "visible", "policies[1].allow", 1],
  ["token: a label matches every token bearing it", ISSUE, ciBotTwin, "github/list_repos", "visible", "policies[1].allow", 1],
  ["allow narrows: not allowed is hidden", ISSUE, ciBot, "github/create_issue", "hidden", "policies[1].allow", 1],
  ["allow narrows: hidden beats everyone's approve", ISSUE, ciBot, "github/merge_pr", "hidden", "policies[1].allow", 1],
  ["allow over server/tool exactly", ISSUE, ciBot, "everything/echo", "visible", "policies[1].allow", 1],
  ["allow narrows other servers away", ISSUE, ciBot, "everything/add", "hidden", "policies[1].allow", 1],
  ["* does not cross /", ISSUE, ciBot, "github/get_x/y", "hidden", "policies[1].allow", 1],
  ["an unlabelled token is not narrowed", ISSUE, plainToken, "github/create_issue", "visible"],
  ["group:", ISSUE, contractor, "secrets/read", "hidden", "policies[2].deny", 2],
  ["domain:", ISSUE, partner, "billing/pay", "hidden", "policies[2].deny", 2],
  ["domain: ignores the domain's case", ISSUE, partnerUpper, "billing/pay", "hidden", "policies[2].deny", 2],
  ["domain: the rule's domain in any case", COMBINED, partner, "everything/echo", "hidden", "policies[5].deny", 5],
  ["the first deny decides", ISSUE, contractor, "secrets/delete_key", "hidden", "policies[0].deny", 0],
  ["no email (unverified): domain: and user: do not match", ISSUE, unverified, "billing/pay", "visible"],
  ["token: matches tokens only, not a member with that id or group", ISSUE, memberNamedLikeToken, "github/create_issue", "visible"],
  ["group: is not a token's label", ISSUE, labelledLikeGroup, "secrets/read", "visible"],
  ["approve inside an allow", COMBINED, deployer, "github/deploy_staging", "approve", "policies[0].approve", 0],
  ["allow lists add up across rules", COMBINED, deployer, "everything/echo", "visible", "policies[1].allow", 1],
  ["allow lists add up, and still narrow", COMBINED, deployer, "everything/add", "hidden", "policies[0].allow", 0],
  ["token: by id; deny beats allow and approve", COMBINED, deployerDenied, "github/deploy_staging", "hidden", "policies[3].deny", 3],
  ["the same token, another tool its allow admits", COMBINED, deployerDenied, "github/get_issue", "visible", "policies[0].allow", 0],
  ["user: ignores the domain's case", COMBINED, alice, "github/deploy_prod", "hidden", "policies[2].deny", 2],
  ["user: keeps the case of the part before @", COMBINED, aliceOtherCase, "github/deploy_prod", "visible"],
  ["a policy's globs never match the bare name", COMBINED, plainToken, "github/delete_issue", "visible"],
  ["single-MCP: deny over bare names", SINGLE, contractor, "delete_user", "hidden", "policies[0].deny", 0],
  ["single-MCP: allow over bare names", SINGLE, ciBot, "get_user", "visible", "policies[1].allow", 1],
  ["single-MCP: narrowed", SINGLE, ciBot, "list_users", "hidden", "policies[1].allow", 1],
  ["single-MCP: folded approve after an allow", SINGLE, ciBot, "merge_pr", "approve", "approve", 2],
  ["single-MCP: folded approve for everyone", SINGLE, contractor, "open_pr", "approve", "approve", 2],
  ["single-MCP: folded approve_destructive", SINGLE, contractor, "wipe", "approve", "approve_destructive", 2, true],
  ["single-MCP: not destructive, not asked", SINGLE, contractor, "wipe", "visible", undefined, undefined, false],
  ["folded approve: a glob over the bare name", LEGACY, plainToken, "github/delete_issue", "approve", "approve", 0],
  ["folded approve: a glob over server/tool", LEGACY, ciBot, "github/merge_pr", "approve", "approve", 0],
  ["folded approve_destructive", LEGACY, contractor, "github/close_issue", "approve", "approve_destructive", 0, true],
  ["folded keys: anything else visible", LEGACY, contractor, "github/close_issue", "visible"],
  ["no policies: visible", NONE, ciBot, "secrets/read", "visible"],
  ["no policies: destructive asks nothing", NONE, contractor, "github/delete_repo", "visible", undefined, undefined, true],
];

describe("tool access", () => {
  it.each(CASES)("%s", (_what, config, subject, name, access, at, index, destructive) => {
    const decision = toolAccess(config, subject).decide({ name, ...(destructive === undefined ? {} : { destructive }) });
    expect(decision).toEqual(at === undefined ? { access } : { access, rule: { at, index, list: at.slice(at.lastIndexOf(".") + 1) } });
  });

  it("is open only for a caller no rule selects", () => {
    expect(toolAccess(NONE, ciBot).open).toBe(true);
    expect(toolAccess(ISSUE, ciBot).open).toBe(false);
    expect(toolAccess(COMBINED, plainToken).open).toBe(false);
    expect(toolAccess(multi([{ who: ["group:x"], deny: ["**"] }]), plainToken).open).toBe(true);
    expect(toolAccess(LEGACY, plainToken).open).toBe(false);
  });

  it("folds the top-level approval keys into one rule for everyone, after the policies", () => {
    const config = multi([{ who: ["token:ci-bot"], allow: ["github/*"] }], { globs: ["*delete*"], destructive: true });
    expect(accessRules(config)).toEqual([
      { who: ["token:ci-bot"], allow: ["github/*"], at: "policies[0]" },
      { who: ["*"], approve: ["*delete*"], matchesBareName: true, approveDestructive: true, at: "approve" },
    ]);
    expect(accessRules(multi(undefined, { globs: [], destructive: true }))).toEqual([{ who: ["*"], approveDestructive: true, at: "approve" }]);
    expect(accessRules(multi(undefined, { globs: [], destructive: false }))).toEqual([]);
    expect(accessRules(NONE)).toEqual([]);
  });

  it("compiles once per config object and caller object", () => {
    expect(toolAccess(ISSUE, ciBot)).toBe(toolAccess(ISSUE, ciBot));
    expect(toolAccess(ISSUE, ciBot)).not.toBe(toolAccess(ISSUE, ciBotTwin));
    expect(toolAccess({ ...ISSUE }, ciBot)).not.toBe(toolAccess(ISSUE, ciBot));
  });

  it("decides anew for a caller object changed in place (a member's groups at a refresh), and compiles again only then", () => {
    const member: Subject = { kind: "member", id: "acme.m", email: "m@acme.example", groups: ["contractors"] };
    const before = toolAccess(ISSUE, member);
    expect(before.decide({ name: "secrets/read" }).access).toBe("hidden");
    member.groups = ["staff"];
    expect(toolAccess(ISSUE, member).decide({ name: "secrets/read" }).access).toBe("visible");
    expect(toolAccess(ISSUE, member)).toBe(toolAccess(ISSUE, member));
    expect(toolAccess(ISSUE, member)).not.toBe(before);
  });
});

describe("a server hidden as a whole", () => {
  it("is one all of whose tools the caller's rules hide", () => {
    expect(toolAccess(ISSUE, contractor).serverHidden("secrets", ["secrets/read", "secrets/write"])).toBe(true);
    expect(toolAccess(ISSUE, ciBot).serverHidden("everything", ["everything/add", "everything/echo"])).toBe(false);
    expect(toolAccess(ISSUE, ciBot).serverHidden("everything", ["everything/add", "everything/sum"])).toBe(true);
    expect(toolAccess(ISSUE, plainToken).serverHidden("github", ["github/delete_repo", "github/delete_issue"])).toBe(true);
    expect(toolAccess(ISSUE, plainToken).serverHidden("github", ["github/delete_repo", "github/get_issue"])).toBe(false);
    // An approval does not hide.
    expect(toolAccess(ISSUE, contractor).serverHidden("github", ["github/merge_pr"])).toBe(false);
  });

  it("with no tools known: by a deny of the whole server, or allow lists that name it nowhere", () => {
    expect(toolAccess(ISSUE, contractor).serverHidden("secrets", [])).toBe(true);
    expect(toolAccess(ISSUE, contractor).serverHidden("github", [])).toBe(false);
    expect(toolAccess(ISSUE, ciBot).serverHidden("docs", [])).toBe(true);
    expect(toolAccess(ISSUE, ciBot).serverHidden("everything", [])).toBe(false);
    expect(toolAccess(ISSUE, plainToken).serverHidden("docs", [])).toBe(false);
    expect(toolAccess(multi([{ who: ["*"], deny: ["**"] }]), plainToken).serverHidden("docs", [])).toBe(true);
    expect(toolAccess(multi([{ who: ["*"], deny: ["docs/get_*"] }]), plainToken).serverHidden("docs", [])).toBe(false);
    expect(toolAccess(multi([{ who: ["*"], allow: ["!docs/*"] }]), plainToken).serverHidden("docs", [])).toBe(false);
    expect(toolAccess(multi([{ who: ["*"], allow: ["{docs,wiki}/*"] }]), plainToken).serverHidden("wiki", [])).toBe(false);
    expect(toolAccess(NONE, plainToken).serverHidden("docs", [])).toBe(false);
  });

  it("in single-MCP mode: by its tools, or with none known by a deny of * or **", () => {
    expect(toolAccess(SINGLE, ciBot).serverHidden("mcp", [])).toBe(false);
    const single = (deny: string[]): AccessConfig => ({ mode: "single", policies: [{ who: ["*"], deny }] });
    expect(toolAccess(single(["*"]), ciBot).serverHidden("mcp", [])).toBe(true);
    expect(toolAccess(single(["**"]), ciBot).serverHidden("mcp", [])).toBe(true);
    expect(toolAccess(single(["get_*"]), ciBot).serverHidden("mcp", [])).toBe(false);
    expect(toolAccess(SINGLE, ciBot).serverHidden("mcp", ["list_users", "delete_user"])).toBe(true);
    expect(toolAccess(SINGLE, ciBot).serverHidden("mcp", ["list_users", "get_user"])).toBe(false);
  });
});
