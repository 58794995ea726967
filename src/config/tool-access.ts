// Pure: what the team's policies decide for one caller and one tool: visible, hidden (the tool does not exist for
// that caller), or visible with every call waiting for the user's consent; and which rule decided. The rules are the
// config's `policies` and its top-level `approve` and `approve_destructive`, which hold for everyone. A config's
// rules are compiled once (kept per config object), and a caller's share of them once per subject object, so
// deciding at every catalog render and every call is a few regular-expression tests.
import type { PolicyRule } from "./policy-rules.ts";
import type { Subject } from "./subject.ts";
import { toolGlobMatcher } from "./tool-globs.ts";
import type { ApprovalRule, ConfigMode } from "./validate.ts";

/** What a caller may do with a tool. */
export type ToolAccess = "visible" | "hidden" | "approve";

/** The list of a rule that decided. `approve_destructive`: the top-level key, for a tool annotated destructive. */
export type RuleList = "allow" | "deny" | "approve" | "approve_destructive";

/** One rule as decisions read it: a policy, or the top-level approval keys folded into one rule for everyone. */
export interface AccessRule {
  who: string[];
  allow?: string[];
  deny?: string[];
  approve?: string[];
  /** Every tool annotated `destructiveHint: true` needs consent (the top-level `approve_destructive`). */
  approveDestructive?: boolean;
  /** The top-level `approve` globs match the tool's own name as well as `server/tool`, as they always have. */
  matchesBareName?: boolean;
  /** Where the rule is written: `policies[1]`, or `approve` for the folded top-level keys. */
  at: string;
}

/** The rule that decided: its place in `accessRules(config)`, the list that matched, and where that is in the config. */
export interface DecidingRule {
  index: number;
  list: RuleList;
  /** `policies[1].deny`, or `approve` / `approve_destructive` for the top-level keys. */
  at: string;
}

export interface AccessDecision {
  access: ToolAccess;
  /** Absent when no rule had a say: the tool is visible because nothing hides it. */
  rule?: DecidingRule;
}

/** A tool as decisions take it. */
export interface ToolRef {
  /** The name the host calls it by: `server/tool` in config-file mode, the bare name in single-MCP mode. */
  name: string;
  /** Whether its server annotates it `destructiveHint: true` (the top-level `approve_destructive` reads it). */
  destructive?: boolean;
}

/** What of a config decisions read (a `ResolvedConfig` is one: pass the config object itself, so it is compiled once). */
export interface AccessConfig {
  mode: ConfigMode;
  approve?: ApprovalRule | undefined;
  policies?: readonly PolicyRule[] | undefined;
}

/** One caller's decisions under one config. */
export interface SubjectAccess {
  /** No rule applies to this caller: every tool is visible and no call asks (callers may skip deciding). */
  readonly open: boolean;
  decide(tool: ToolRef): AccessDecision;
  /**
   * Whether a server is hidden from this caller as a whole (its tools, resources, prompts and its entry among the
   * servers). `toolNames`: its tools by the names the host would call them (as `ToolRef.name`). With tools, it is
   * hidden when every one is. With none known (a lazy server not loaded yet, or a server that has none), it is
   * hidden when the caller's rules leave nothing of it: a deny of `<server>/*` or `<server>/**` (or `**`; in
   * single-MCP mode `*` or `**`), or `allow` lists none of whose globs names it.
   */
  serverHidden(server: string, toolNames: readonly string[]): boolean;
}

/** The effective rules of a config, in order: its `policies`, then its top-level approval keys as a rule for everyone. */
export function accessRules(config: AccessConfig): AccessRule[] {
  const rules: AccessRule[] = (config.policies ?? []).map((rule, i) => ({ ...rule, at: `policies[${i}]` }));
  const legacy = config.approve;
  if (legacy && (legacy.globs.length > 0 || legacy.destructive)) {
    rules.push({
      who: ["*"],
      ...(legacy.globs.length > 0 ? { approve: [...legacy.globs], matchesBareName: true } : {}),
      ...(legacy.destructive ? { approveDestructive: true } : {}),
      at: "approve",
    });
  }
  return rules;
}

/**
 * The decisions for one caller under a config (compiled once per config object and per subject object). A session's
 * subject is one object updated in place by each request (a member's groups change at a refresh): the caller's share
 * is compiled again when what the selectors read of it has changed.
 */
export function toolAccess(config: AccessConfig, subject: Subject): SubjectAccess {
  const compiled = compiledAccess(config);
  const key = JSON.stringify([subject.kind, subject.id, subject.label, subject.email, subject.groups]);
  let kept = compiled.bySubject.get(subject);
  if (kept?.key !== key) {
    kept = { key, access: new CallerAccess(config.mode, compiled.rules.filter((rule) => rule.selects(subject))) };
    compiled.bySubject.set(subject, kept);
  }
  return kept.access;
}

/** One decision, for callers that have no `SubjectAccess` at hand (the same compiled rules underneath). */
export const decideToolAccess = (config: AccessConfig, subject: Subject, tool: ToolRef): AccessDecision => toolAccess(config, subject).decide(tool);

type Matcher = (name: string) => boolean;

/** A rule ready to decide with: its selectors and its globs compiled. */
interface CompiledRule {
  index: number;
  at: string;
  selects: (subject: Subject) => boolean;
  allow?: Matcher;
  deny?: Matcher;
  approve?: Matcher;
  approveDestructive: boolean;
  matchesBareName: boolean;
  /** The servers some allow glob can name (every server for a glob with no server part, such as `**` or a negation). */
  allowsServer?: Matcher;
  /** The servers a deny glob hides whole (`<server>/*`, `<server>/**`, `**`). */
  deniesServer?: Matcher;
}

interface CompiledAccess {
  rules: CompiledRule[];
  bySubject: WeakMap<Subject, { key: string; access: SubjectAccess }>;
}

const compiledByConfig = new WeakMap<AccessConfig, CompiledAccess>();

function compiledAccess(config: AccessConfig): CompiledAccess {
  let compiled = compiledByConfig.get(config);
  if (!compiled) {
    compiled = { rules: accessRules(config).map((rule, index) => compileRule(rule, index, config.mode)), bySubject: new WeakMap() };
    compiledByConfig.set(config, compiled);
  }
  return compiled;
}

function compileRule(rule: AccessRule, index: number, mode: ConfigMode): CompiledRule {
  const selectors = rule.who.map(selector);
  return {
    index,
    at: rule.at,
    selects: (subject) => selectors.some((selects) => selects(subject)),
    ...(rule.allow ? { allow: toolGlobMatcher(rule.allow), allowsServer: serversNamed(rule.allow, false, mode) } : {}),
    ...(rule.deny ? { deny: toolGlobMatcher(rule.deny), deniesServer: serversNamed(rule.deny, true, mode) } : {}),
    ...(rule.approve ? { approve: toolGlobMatcher(rule.approve) } : {}),
    approveDestructive: rule.approveDestructive === true,
    matchesBareName: rule.matchesBareName === true,
  };
}

/**
 * The servers a glob list names, by each glob's server part. `whole`: only globs that take every tool of their
 * server (`<server>/*`, `<server>/**`, `**`); otherwise any glob, and one with no server part names every server.
 * In single-MCP mode globs have no server part: the one server is named by any glob, taken whole by `*` or `**`.
 */
function serversNamed(globs: readonly string[], whole: boolean, mode: ConfigMode): Matcher {
  const parts: string[] = [];
  for (const glob of globs) {
    if (mode === "single") {
      if (!whole || glob === "*" || glob === "**") parts.push("**");
      continue;
    }
    const slash = glob.indexOf("/");
    const negated = glob.startsWith("!");
    if (whole) {
      if (glob === "**") parts.push("**");
      else if (!negated && slash > 0 && ["*", "**"].includes(glob.slice(slash + 1))) parts.push(glob.slice(0, slash));
    } else {
      parts.push(negated || slash < 0 ? "**" : glob.slice(0, slash));
    }
  }
  return toolGlobMatcher(parts);
}

/** Whether any of `who`'s selectors selects the subject (a `dashboard_admins` list, a rule's `who`). */
export const selectsSubject = (who: readonly string[], subject: Subject): boolean => who.some((text) => selector(text)(subject));

/** One `who` selector as a test of a subject. The schema admits no other kinds; an unknown one selects nobody. */
function selector(text: string): (subject: Subject) => boolean {
  if (text === "*") return () => true;
  const colon = text.indexOf(":");
  const kind = text.slice(0, colon);
  const value = text.slice(colon + 1);
  switch (kind) {
    case "token":
      return (subject) => subject.kind === "token" && (subject.id === value || subject.label === value);
    case "user": {
      const email = comparableEmail(value);
      return (subject) => subject.email !== undefined && comparableEmail(subject.email) === email;
    }
    case "domain": {
      const domain = value.toLowerCase();
      return (subject) => subject.email !== undefined && emailDomain(subject.email) === domain;
    }
    case "group":
      return (subject) => subject.groups?.includes(value) === true;
    default:
      return () => false;
  }
}

/** An email's domain, in lower case (domains have no case; the part before the @ keeps its own). */
const emailDomain = (email: string): string => email.slice(email.lastIndexOf("@") + 1).toLowerCase();
const comparableEmail = (email: string): string => `${email.slice(0, email.lastIndexOf("@"))}@${emailDomain(email)}`;

const deciding = (rule: CompiledRule, list: RuleList): DecidingRule => ({
  index: rule.index,
  list,
  at: rule.at === "approve" ? list : `${rule.at}.${list}`,
});

/** A caller's rules under one config: deny first, then the narrowing of allow, then approval. */
class CallerAccess implements SubjectAccess {
  readonly open: boolean;
  readonly #mode: ConfigMode;
  readonly #rules: CompiledRule[];
  /** The caller's rules that have `allow`: with any, only what one of them allows is visible. */
  readonly #narrowing: CompiledRule[];

  constructor(mode: ConfigMode, rules: CompiledRule[]) {
    this.#mode = mode;
    this.#rules = rules;
    this.#narrowing = rules.filter((rule) => rule.allow !== undefined);
    this.open = rules.length === 0;
  }

  decide(tool: ToolRef): AccessDecision {
    const denied = this.#rules.find((rule) => rule.deny?.(tool.name));
    if (denied) return { access: "hidden", rule: deciding(denied, "deny") };
    let allowed: CompiledRule | undefined;
    if (this.#narrowing.length > 0) {
      allowed = this.#narrowing.find((rule) => rule.allow?.(tool.name));
      if (!allowed) return { access: "hidden", rule: deciding(this.#narrowing[0]!, "allow") };
    }
    const bare = this.#mode === "single" ? tool.name : tool.name.slice(tool.name.indexOf("/") + 1);
    for (const rule of this.#rules) {
      if (rule.approve?.(tool.name) || (rule.matchesBareName && rule.approve?.(bare))) return { access: "approve", rule: deciding(rule, "approve") };
      if (rule.approveDestructive && tool.destructive === true) return { access: "approve", rule: deciding(rule, "approve_destructive") };
    }
    return allowed ? { access: "visible", rule: deciding(allowed, "allow") } : { access: "visible" };
  }

  serverHidden(server: string, toolNames: readonly string[]): boolean {
    if (toolNames.length > 0) return toolNames.every((name) => this.decide({ name }).access === "hidden");
    if (this.#rules.some((rule) => rule.deniesServer?.(server))) return true;
    return this.#narrowing.length > 0 && !this.#narrowing.some((rule) => rule.allowsServer?.(server));
  }
}
