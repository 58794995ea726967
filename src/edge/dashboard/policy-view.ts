// "View as" on the policies page: the caller a form names (a token label, or a member's verified email and groups)
// as the subject policies are decided for, and what the team's catalog is for them: the catalog their 2026 tools/list
// gets, the team's tools they do not see, and those whose every call asks the user (src/config/tool-access.ts).
import { exposedName } from "../../catalog/names.ts";
import { loadTokenCounter } from "../../catalog/tokenizer.ts";
import type { Subject } from "../../config/subject.ts";
import { toolAccess } from "../../config/tool-access.ts";
import type { ResolvedConfig } from "../../config/validate.ts";
import type { Env } from "../../lib/env.ts";
import { settings } from "../../lib/settings.ts";
import { teamCatalog, type TeamCatalog } from "../../modern/team-catalog.ts";
import type { CallerView, ViewAs } from "./policies-page.tsx";

/** The most groups a viewed member is given (a grant keeps at most 64). */
const MAX_GROUPS = 64;

/** Whom the form names, as a subject and in words; none when it names nobody. */
export function viewAsSubject(viewAs: ViewAs): { subject: Subject; who: string } | undefined {
  const groups = (viewAs.groups ?? "")
    .split(",")
    .map((g) => g.trim())
    .filter((g) => g !== "")
    .slice(0, MAX_GROUPS);
  if (viewAs.label) return { subject: { kind: "token", id: "view-as", label: viewAs.label }, who: `a token labelled ${viewAs.label}` };
  if (!viewAs.email) return undefined;
  return { subject: { kind: "member", id: "view-as", email: viewAs.email, groups }, who: `${viewAs.email}${groups.length > 0 ? ` (${groups.join(", ")})` : ""}` };
}

/** Every tool of a catalog by the name the host calls it, with whether its server annotates it destructive. */
const toolsOf = (config: ResolvedConfig, catalog: TeamCatalog): Map<string, boolean> =>
  new Map(catalog.readings.flatMap((r) => (r.catalog?.tools ?? []).map((t) => [exposedName(config.mode, r.server, t.name), t.annotations?.destructiveHint === true] as const)));

/** The catalog the form's caller gets, beside the team's; undefined when the form names nobody. */
export async function callerView(env: Env, team: string, config: ResolvedConfig, viewAs: ViewAs): Promise<CallerView | undefined> {
  const as = viewAsSubject(viewAs);
  if (!as) return undefined;
  const counter = await loadTokenCounter(env.ASSETS);
  const ttl = settings(env).sessionTtlSeconds;
  const [theirs, everyone] = await Promise.all([teamCatalog(env.TEAMS, team, config, counter, ttl, as.subject), teamCatalog(env.TEAMS, team, config, counter, ttl)]);
  const seen = toolsOf(config, theirs);
  const access = toolAccess(config, as.subject);
  return {
    who: as.who,
    catalog: theirs,
    hidden: [...toolsOf(config, everyone).keys()].filter((name) => !seen.has(name)),
    approve: [...seen].filter(([name, destructive]) => access.decide({ name, destructive }).access === "approve").map(([name]) => name),
  };
}
