// The tools and policies pages and the config edits they post: a tool promoted or unpromoted, pin_tools turned on or
// off, a pinned tool's changed definition approved, the policies saved. Every edit is a POST checked by `sessionForm`
// (CSRF), made on the config as stored (unredacted) and written through the admin API's own path
// (src/edge/admin/config-write.ts: validation, store, the admin action in the audit trail), refused when the config
// changed since the page was rendered (its version in a hidden field); a stored edit is then taken by the team's live
// sessions at their next request (the admin API's reload), so an agent's next tools/list shows it.
import * as z from "zod";
import { MAX_PROMOTED } from "../../config/schema.ts";
import type { ConfigIssue } from "../../config/validate.ts";
import { storedConfig, writeTeamConfig, type ConfigWrite } from "../admin/config-write.ts";
import { approvePinChange } from "../admin/pin-routes.ts";
import { PinParam } from "../admin/schemas.ts";
import { reloadTeamSessions } from "../admin/session-routes.ts";
import { message, refused } from "./page-answers.tsx";
import { POLICIES_TEXT_LIMIT } from "./policies-page.tsx";
import { policiesPage, toolsPage } from "./config-edit-pages.tsx";
import { actedBy, type TeamPagesApp, type TeamPagesContext } from "./team-scope.ts";
import { VERSION_FIELD } from "./tool-edit-forms.tsx";

/** The policies form's limit: its text, urlencoded (a JSON character can take three bytes), and the hidden fields. */
const POLICIES_FORM_LIMIT = 3 * POLICIES_TEXT_LIMIT + 1024;

/** What a Promote / Unpromote button posts: the name as the config's `promote` takes one, and which of the two. */
const PromoteForm = z.object({ tool: z.string().min(1).max(200), action: z.enum(["promote", "unpromote"]) });

const STALE = "Nothing was stored: the team's config changed since this page was shown (another admin, or the admin API, saved it).";
const STALE_TOOLS = `${STALE} The page now shows it as it is: check, then do it again.`;
const STALE_POLICIES = `${STALE} Your text is kept here: open the page anew to see the policies as stored now, or save this text again to replace them.`;

/** An edit's request: the form CSRF-checked (the mount checked the session and the team); else the answer to give. */
type Edit = { form: URLSearchParams; team: string };

async function editRequest(c: TeamPagesContext, limit?: number): Promise<Edit | Response> {
  const posted = await c.var.sessionForm(limit);
  if (!posted.ok) return refused(c, posted.refusal, c.var.scope.home, limit);
  return { form: posted.form, team: c.var.scope.team };
}

/** The team's config is not a JSON object any more (another writer): nothing to edit. */
const unreadable = (c: TeamPagesContext) => message(c, 404, "No such team", "The team's stored config is not a JSON object: nothing was changed.", c.var.scope.csrf, c.var.scope.home);

/** Writes an edited config on the version the form was rendered from; a stored one is taken by the live sessions. */
async function save(c: TeamPagesContext, edit: Edit, raw: Record<string, unknown>): Promise<ConfigWrite> {
  const { by } = actedBy(c.var.scope);
  const written = await writeTeamConfig(c.env, c.req.raw, edit.team, raw, edit.form.get(VERSION_FIELD) ?? "", by);
  if (written.ok) await reloadTeamSessions(c.env, edit.team, c.req.raw, by);
  return written;
}

const named = (issues: ConfigIssue[]) => issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("; ");

/** The tools page after an edit of the config: what it did, or why it did nothing. */
async function afterToolEdit(c: TeamPagesContext, written: ConfigWrite, done: string) {
  if (written.ok) return toolsPage(c, 200, { notice: done });
  if (written.problem === "stale") return toolsPage(c, 409, { problem: STALE_TOOLS });
  return toolsPage(c, 400, { problem: `Not stored: the config would not validate: ${named(written.issues)}` });
}

/** The posted policies text read: none (empty: no policies), the value, or the problem with it. */
function readPolicies(text: string): { value: unknown } | { issue: ConfigIssue } {
  if (text.length > POLICIES_TEXT_LIMIT) return { issue: { path: "policies", message: `the text is over ${POLICIES_TEXT_LIMIT.toLocaleString("en-US")} characters` } };
  if (text.trim() === "") return { value: undefined };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { issue: { path: "policies", message: `not valid JSON (${err instanceof SyntaxError ? err.message : "unreadable"})` } };
  }
}

/** The tools and policies pages, and the edits they post (relative to a team's pages: team-pages.tsx). */
export function configEditRoutes(app: TeamPagesApp): void {
  app.get("/tools", (c) => toolsPage(c, 200));

  app.post("/tools/promote", async (c) => {
    const edit = await editRequest(c);
    if (edit instanceof Response) return edit;
    const asked = PromoteForm.safeParse({ tool: edit.form.get("tool"), action: edit.form.get("action") });
    if (!asked.success) return toolsPage(c, 400, { problem: "Nothing changed: the form named no tool (at most 200 characters) or no action." });
    const stored = await storedConfig(c.env, edit.team);
    if (!stored) return unreadable(c);
    const { tool, action } = asked.data;
    const before = Array.isArray(stored.raw["promote"]) ? (stored.raw["promote"] as unknown[]) : [];
    if (action === "promote" && !before.includes(tool) && before.length >= MAX_PROMOTED) {
      const problem = `Not promoted: at most ${MAX_PROMOTED} tools are promoted (each costs its whole definition in every agent's context). Unpromote one first.`;
      return toolsPage(c, 400, { problem });
    }
    const promote = action === "promote" ? [...before.filter((t) => t !== tool), tool] : before.filter((t) => t !== tool);
    const { promote: _old, ...rest } = stored.raw;
    const written = await save(c, edit, promote.length > 0 ? { ...rest, promote } : rest);
    const done =
      action === "promote"
        ? `Promoted ${tool}: every session's tools/list now carries it whole, called by that name.`
        : `Unpromoted ${tool}: it is back in discover_tool's catalog only.`;
    return afterToolEdit(c, written, done);
  });

  app.post("/tools/pin", async (c) => {
    const edit = await editRequest(c);
    if (edit instanceof Response) return edit;
    const pin = edit.form.get("pin");
    if (pin !== "on" && pin !== "off") return toolsPage(c, 400, { problem: "Nothing changed: the form said neither on nor off." });
    const stored = await storedConfig(c.env, edit.team);
    if (!stored) return unreadable(c);
    const written = await save(c, edit, { ...stored.raw, pin_tools: pin === "on" });
    const done =
      pin === "on"
        ? "Pinning is on: each tool's definition is recorded as first seen; a changed one is withheld until approved here."
        : "Pinning is off: agents get each tool's definition as its server offers it now.";
    return afterToolEdit(c, written, done);
  });

  // The admin API's approve (the same function, the same admin action).
  app.post("/pins/approve", async (c) => {
    const edit = await editRequest(c);
    if (edit instanceof Response) return edit;
    const pin = PinParam.safeParse({ team: edit.team, server: edit.form.get("server"), tool: edit.form.get("tool") });
    if (!pin.success) return toolsPage(c, 400, { problem: "Nothing approved: the form named no pinned tool." });
    const { server, tool } = pin.data;
    if (!(await approvePinChange(c.env, c.req.raw, edit.team, server, tool, actedBy(c.var.scope).by))) {
      return toolsPage(c, 404, { problem: `Nothing approved: no change of ${server}/${tool} is waiting for approval.` });
    }
    return toolsPage(c, 200, { notice: `Approved the new definition of ${server}/${tool}: it is pinned now, and agents get it as their sessions next read ${server}'s tools.` });
  });

  app.get("/policies", (c) => policiesPage(c, 200));


  app.post("/policies", async (c) => {
    const edit = await editRequest(c, POLICIES_FORM_LIMIT);
    if (edit instanceof Response) return edit;
    const text = edit.form.get("policies") ?? "";
    const typed = (status: 400 | 409, issues: ConfigIssue[]) => policiesPage(c, status, { text, issues });
    const read = readPolicies(text);
    if ("issue" in read) return typed(400, [read.issue]);
    const stored = await storedConfig(c.env, edit.team);
    if (!stored) return unreadable(c);
    const { policies: _old, ...rest } = stored.raw;
    const written = await save(c, edit, read.value === undefined ? rest : { ...rest, policies: read.value });
    if (written.ok) return policiesPage(c, 200, { saved: true });
    return written.problem === "stale" ? typed(409, [{ path: "", message: STALE_POLICIES }]) : typed(400, written.issues);
  });
}
