// The team config's `policies`: who (a token, a member, a domain, a group, everyone) may see which tools, and which
// of their calls wait for the user's consent. One zod schema per shape; what the rules decide is tool-access.ts.
// A rule that could never do anything is refused with a message naming the rule and the field, so a typo does not
// pass for a policy.
import * as z from "zod";
import { ToolGlobs } from "./tool-globs.ts";

/** An email domain as a selector takes it (any case: domains are compared without it). */
const DOMAIN = "(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}";
/** A label or a group name: no space at either end, at most `max` characters. */
const name = (max: number) => `\\S(?:.{0,${max - 2}}\\S)?`;

/** The selectors that name members. */
const MEMBER_KINDS = `user:[^\\s@]{1,64}@${DOMAIN}|domain:${DOMAIN}|group:${name(256)}`;
/** Every selector `who` accepts; the JSON Schema publishes it as the pattern. */
const SELECTOR = new RegExp(`^(?:\\*|token:${name(100)}|${MEMBER_KINDS})$`);
/** Every selector `dashboard_admins` accepts: members only. */
const MEMBER_SELECTOR = new RegExp(`^(?:${MEMBER_KINDS})$`);

const KINDS = '"*" (everyone), token:<label or id>, user:<email>, domain:<email domain>, group:<name>';

/** Why a selector is refused, in words that say what to write instead. */
function selectorProblem(input: unknown): string {
  const text = String(input);
  if (text === "") return `a selector cannot be empty: use ${KINDS}`;
  const colon = text.indexOf(":");
  if (colon < 0) return `unknown selector ${JSON.stringify(text)}: use ${KINDS}`;
  const kind = text.slice(0, colon);
  const value = text.slice(colon + 1);
  switch (kind) {
    case "token":
      return `token: takes a token's label (team token --label) or its id, 1–100 characters without spaces at either end: ${JSON.stringify(text)}`;
    case "group":
      return `group: takes a group name as the identity provider's groups claim gives it, 1–256 characters without spaces at either end: ${JSON.stringify(text)}`;
    case "user":
      return `user: takes an email address, e.g. user:alice@example.com: ${JSON.stringify(text)}`;
    case "domain":
      return value.includes("@")
        ? `domain: takes the part after the @, e.g. domain:example.com: ${JSON.stringify(text)}`
        : `domain: takes an email domain, e.g. domain:example.com: ${JSON.stringify(text)}`;
    default:
      return `unknown selector kind ${JSON.stringify(`${kind}:`)}: use ${KINDS}`;
  }
}

/** Who a rule is for. `user:` and `domain:` match verified emails only; `token:` a token's label or its id. */
export const Selector = z.string().regex(SELECTOR, { error: (issue) => selectorProblem(issue.input) });

/**
 * The team config's `dashboard_admins`: the members who may open the team's pages at /t/<team>/dashboard, signed in
 * through the team's identity provider. The selectors and their matching are the policies' own (tool-access.ts
 * `selectsSubject`); only the kinds that name members are taken.
 */
export const DashboardAdmins = z
  .array(
    z.string().regex(MEMBER_SELECTOR, {
      error: (issue) =>
        /^(?:user|domain|group):/.test(String(issue.input))
          ? selectorProblem(issue.input)
          : `dashboard_admins names members: user:<email>, domain:<email domain> or group:<name>, not ${JSON.stringify(issue.input)}`,
    }),
  )
  .min(1, "dashboard_admins is empty, so it names nobody: list user:, domain: or group: selectors, or remove it")
  .max(100)
  .optional()
  .describe(
    "Who may sign in at /t/<team>/dashboard through the team's identity provider and see and administer this team's pages: user:<email>, domain:<email domain> (verified emails only) or group:<name> (the provider's groups claim). Checked again at every request.",
  );

const globs = (list: string, what: string) =>
  ToolGlobs.min(1, `${list} is empty: list globs, or remove ${list}`).optional().describe(what);

/** One rule: whom it is for, and what it allows, denies, or asks consent for. Unknown keys are refused (typos). */
export const PolicyRule = z
  .strictObject({
    who: z
      .array(Selector)
      .min(1, `who is empty, so the rule is for nobody: name whom it is for (${KINDS})`)
      .max(100)
      .describe(`Whom the rule is for: ${KINDS}.`),
    allow: globs("allow", "Only tools matching one of these globs are visible to whom the rule is for (deny still wins)."),
    deny: globs("deny", "Tools matching any of these globs are hidden from whom the rule is for: they do not exist for them."),
    approve: globs("approve", "Every call of a tool matching one of these globs waits for the user's consent."),
  })
  .refine((rule) => rule.allow !== undefined || rule.deny !== undefined || rule.approve !== undefined, {
    message: "the rule does nothing: give it allow, deny or approve",
  });
export type PolicyRule = z.output<typeof PolicyRule>;

export const Policies = z
  .array(PolicyRule)
  .max(200)
  .optional()
  .describe(
    "Who may use which tool. A caller's rules are those whose `who` names it; if any of them has `allow`, only the tools some `allow` matches are visible to it; `deny` always wins; `approve` marks tools whose every call needs the user's consent. Globs are over `server/tool` in config-file mode (`*` does not cross `/`), over the bare name in single-MCP mode.",
  );

/** Server names as a glob's first part names them literally (anything else is a pattern, not checked). */
const LITERAL_SERVER = /^[A-Za-z0-9_-]+$/;

/**
 * Why a config-file mode glob can never match a `server/tool` name, or undefined: a glob without `/` (other than
 * `**`) cannot, since `*` does not cross `/`; nor can one whose server part names no server of the config. A negated
 * glob matches nearly everything, so it is not judged.
 */
export function globNeverMatches(glob: string, servers: ReadonlySet<string>): string | undefined {
  // An empty glob is refused by its own schema; say nothing more of it.
  if (glob === "" || glob.startsWith("!") || glob === "**") return undefined;
  const slash = glob.indexOf("/");
  if (slash < 0) {
    return `${JSON.stringify(glob)} can never match: tools are named server/tool here and * does not cross /; write ${JSON.stringify(`*/${glob}`)} for every server's tools`;
  }
  const server = glob.slice(0, slash);
  if (LITERAL_SERVER.test(server) && !servers.has(server)) {
    return `${JSON.stringify(glob)} can never match: no server is named ${JSON.stringify(server)} under mcp`;
  }
  return undefined;
}

const LISTS = ["allow", "deny", "approve"] as const;

/** Config-file mode: each glob of each rule that can never match, as an issue at its path (`policies.1.deny.0`). */
export function policyGlobIssues(policies: readonly PolicyRule[] | undefined, servers: ReadonlySet<string>, ctx: z.RefinementCtx): void {
  for (const [index, rule] of (policies ?? []).entries()) {
    for (const list of LISTS) {
      for (const [at, glob] of (rule[list] ?? []).entries()) {
        const problem = globNeverMatches(glob, servers);
        if (problem) ctx.addIssue({ code: "custom", path: ["policies", index, list, at], message: problem });
      }
    }
  }
}
