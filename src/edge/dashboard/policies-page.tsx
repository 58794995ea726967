// A team's policies, `/dashboard/teams/<team>/policies`: the `policies` of its stored config as written, in a form that
// saves them (the whole config through the admin API's validation: src/edge/admin/config-write.ts), each problem that
// validation finds shown inline beside the text (the text kept as typed when a save is refused), and "view as": a token label, or a member's email and
// groups, and exactly the catalog that caller's 2026 tools/list gets (the team's catalog through their policies, as
// their own objects filter it: src/modern/team-catalog.ts), with the tools that ask for consent and what is hidden.
import type { ConfigIssue } from "../../config/validate.ts";
import type { TeamCatalog } from "../../modern/team-catalog.ts";
import { CSRF_FIELD } from "./csrf.ts";
import { Layout } from "./layout.tsx";
import { VERSION_FIELD } from "./tool-edit-forms.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";

/** Whom the page views the catalog as, as the form gives it. */
export interface ViewAs {
  label?: string | undefined;
  email?: string | undefined;
  groups?: string | undefined;
}

/** The catalog a caller gets, and what their policies did to the team's. */
export interface CallerView {
  who: string;
  catalog: TeamCatalog;
  /** Tools of the team's catalog the caller does not see, and those whose every call asks the user. */
  hidden: string[];
  approve: string[];
}

/** The most characters of policies JSON the form saves (the admin API takes a whole config of up to 1 MiB). */
export const POLICIES_TEXT_LIMIT = 64 * 1024;

export interface PoliciesPageProps {
  team: string;
  /** The textarea's text: the `policies` as stored (pretty JSON; empty when the config has none), or as typed. */
  written: string;
  /** The stored config's version, which a save carries. */
  version: string;
  /** Problems with the policies: the stored ones', or those a save was refused for (`refused`). */
  issues: ConfigIssue[];
  refused?: boolean;
  saved?: boolean;
  labels: string[];
  viewAs: ViewAs;
  view: CallerView | undefined;
  scope: TeamScope;
}

function ViewAsForm({ base, labels, viewAs }: { base: string; labels: string[]; viewAs: ViewAs }) {
  return (
    <form method="get" action={`${base}/policies`} class="filters">
      <label>
        A token labelled
        <select name="label">
          <option value="">(a member instead)</option>
          {labels.map((label) => (
            <option value={label} selected={label === viewAs.label}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Or a member's verified email
        <input type="email" name="email" value={viewAs.email ?? ""} placeholder="alice@acme.example" />
      </label>
      <label>
        Their groups
        <input type="text" name="groups" value={viewAs.groups ?? ""} placeholder="staff, contractors" />
      </label>
      <button type="submit">View as</button>
    </form>
  );
}

function Listed({ name, title, tools }: { name: string; title: string; tools: string[] }) {
  return (
    <section aria-labelledby={`${name}-heading`}>
      <h3 id={`${name}-heading`}>{`${title} (${tools.length})`}</h3>
      {tools.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul data-list={name}>
          {tools.map((t) => (
            <li>
              <code>{t}</code>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function PolicyForm({ base, written, version, issues, refused, csrf }: Pick<PoliciesPageProps, "written" | "version" | "issues" | "refused"> & { base: string; csrf: string }) {
  const said = refused
    ? "Not saved (the stored config is unchanged):"
    : "The admin API refuses these policies; until they are put right every tool is hidden from everyone:";
  return (
    <form method="post" action={`${base}/policies`} class="policy-form">
      <input type="hidden" name={CSRF_FIELD} value={csrf} />
      <input type="hidden" name={VERSION_FIELD} value={version} />
      <label for="policies-text">The policies, as JSON (an array of rules; empty for none: everyone sees every tool)</label>
      <textarea
        id="policies-text"
        name="policies"
        rows={16}
        spellcheck={false}
        aria-invalid={issues.length > 0 ? "true" : undefined}
        aria-describedby={issues.length > 0 ? "policy-problems" : undefined}
      >
        {written}
      </textarea>
      {issues.length > 0 ? (
        <div role="alert" class="problems" id="policy-problems">
          <p>{said}</p>
          <ul data-list="issues">
            {issues.map((i) => (
              <li>{i.path ? `${i.path}: ${i.message}` : i.message}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <button type="submit">Save the policies</button>
    </form>
  );
}

export function PoliciesPage({ team, written, version, issues, refused, saved, labels, viewAs, view, scope }: PoliciesPageProps) {
  return (
    <Layout title={`Team ${team}: policies`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="policies" />
      <h2>As written</h2>
      {saved ? (
        <p role="status" class="notice" data-outcome="notice">
          Saved: the team's live sessions take the new policies at their next request.
        </p>
      ) : null}
      <PolicyForm base={scope.base} written={written} version={version} issues={issues} refused={refused} csrf={scope.csrf} />
      <h2>View as</h2>
      <ViewAsForm base={scope.base} labels={labels} viewAs={viewAs} />
      {view ? (
        <section aria-labelledby="as-heading" data-as={view.who}>
          <h3 id="as-heading">{`The catalog ${view.who} gets (${view.catalog.fitted.tokens.toLocaleString("en-US")} tokens of tools/list)`}</h3>
          <pre class="catalog" data-catalog>
            {view.catalog.fitted.description}
          </pre>
          <Listed name="approve" title="Tools whose every call asks the user first" tools={view.approve} />
          <Listed name="hidden" title="Tools of the team's catalog hidden from this caller" tools={view.hidden} />
        </section>
      ) : null}
    </Layout>
  );
}
