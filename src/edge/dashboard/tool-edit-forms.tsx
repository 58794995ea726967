// The tools page's edits, each a POST form carrying the session's CSRF token and the version of the config the page
// was rendered from (a config changed since is not overwritten: src/edge/admin/config-write.ts): a tool promoted or
// unpromoted, the team's pin_tools turned on or off, and a pinned tool's changed definition approved.
import type { Child } from "hono/jsx";
import { MAX_PROMOTED } from "../../config/schema.ts";
import type { PinInfo } from "../../store/store.ts";
import { CSRF_FIELD } from "./csrf.ts";

/** The hidden field that carries the config's version. */
export const VERSION_FIELD = "version";

/** What the tools page's edits need: the config's version and what it sets, and the changes waiting for approval. */
export interface ToolEdits {
  version: string;
  promoted: readonly string[];
  pinTools: boolean;
  waiting: PinInfo[];
  csrf: string;
  /** Where the team's pages are (the scope's base): the forms post there. */
  base: string;
}

function EditForm({ action, edits, fields, children }: { action: string; edits: ToolEdits; fields: Record<string, string>; children: Child }) {
  return (
    <form method="post" action={action} class="inline">
      <input type="hidden" name={CSRF_FIELD} value={edits.csrf} />
      <input type="hidden" name={VERSION_FIELD} value={edits.version} />
      {Object.entries(fields).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      {children}
    </form>
  );
}

/** Promote, or unpromote, one tool by the name hosts call it. */
export function PromoteButton({ team, tool, edits }: { team: string; tool: string; edits: ToolEdits }) {
  const promoted = edits.promoted.includes(tool);
  const action = promoted ? "unpromote" : "promote";
  return (
    <EditForm action={`${edits.base}/tools/promote`} edits={edits} fields={{ tool, action }}>
      <button type="submit" class="small" data-action={action} aria-label={`${promoted ? "Unpromote" : "Promote"} ${tool}`}>
        {promoted ? "Unpromote" : "Promote"}
      </button>
    </EditForm>
  );
}

/** The promoted tools as the config names them, each with Unpromote (a name no loaded server offers included). */
export function PromotedList({ team, offered, edits }: { team: string; offered: ReadonlySet<string>; edits: ToolEdits }) {
  return (
    <section aria-labelledby="promoted-heading">
      <h2 id="promoted-heading">{`Promoted (${edits.promoted.length} of at most ${MAX_PROMOTED})`}</h2>
      <p class="hint">
        A promoted tool is listed whole in every session's tools/list beside the meta-tools and called by its own name:
        its whole definition is in every agent's context, counted against the budget.
      </p>
      {edits.promoted.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul class="actions" data-list="promoted">
          {edits.promoted.map((tool) => (
            <li data-promoted={tool}>
              <code>{tool}</code>
              {offered.has(tool) ? null : <span class="hint"> (no loaded server offers it: left out of tools/list)</span>}
              <PromoteButton team={team} tool={tool} edits={edits} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** pin_tools on or off, and each pinned tool whose definition changed, with Approve. */
export function PinSection({ team, edits }: { team: string; edits: ToolEdits }) {
  return (
    <section aria-labelledby="pins-heading">
      <h2 id="pins-heading">Pinned definitions</h2>
      <p data-pin-tools={String(edits.pinTools)}>
        {edits.pinTools
          ? "Pinning is on: each tool's definition is recorded when first seen, and a tool whose definition later changes is withheld from every agent until approved here."
          : "Pinning is off: agents get each tool's definition as its server offers it now, changed or not."}
      </p>
      <EditForm action={`${edits.base}/tools/pin`} edits={edits} fields={{ pin: edits.pinTools ? "off" : "on" }}>
        <button type="submit" data-action="pin">
          {edits.pinTools ? "Turn pinning off" : "Turn pinning on"}
        </button>
      </EditForm>
      {edits.waiting.length === 0 ? (
        <p>No changed definition is waiting for approval.</p>
      ) : (
        <ul class="actions" data-list="waiting">
          {edits.waiting.map((pin) => (
            <li data-waiting={`${pin.server}/${pin.tool}`}>
              <code>{`${pin.server}/${pin.tool}`}</code>
              <span class="hint">{` changed ${pin.pendingSince ? `at ${pin.pendingSince.replace("T", " ").replace(/\.\d+Z$/, " UTC")}` : ""}: withheld until approved`}</span>
              <form method="post" action={`${edits.base}/pins/approve`} class="inline">
                <input type="hidden" name={CSRF_FIELD} value={edits.csrf} />
                <input type="hidden" name="server" value={pin.server} />
                <input type="hidden" name="tool" value={pin.tool} />
                <button type="submit" class="small" aria-label={`Approve the change of ${pin.server}/${pin.tool}`}>
                  Approve the change
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
