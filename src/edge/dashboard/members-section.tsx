// The members page's "Members" section: each member who signed in through the team's identity provider (the user
// index: email, subject, issuer, first and last sign-in), their grants (the host that holds each, when it was made and
// expires, its scopes: never a token), a button to revoke each grant and one to remove the member. What the page could
// not read or show is said: no identity provider, no OAUTH_KV, a list cut at the admin API's limits.
import type { MemberGrants } from "../admin/member-grants.ts";
import { MAX_GRANTS_LISTED } from "../admin/member-grants.ts";
import type { GrantInfo } from "../admin/schemas.ts";
import { PostButton } from "./post-button.tsx";

export interface MembersRead {
  /** Whether the team has an identity provider (members sign in through it). */
  idp: boolean;
  /** Why the members' grants cannot be read (no OAUTH_KV, an http issuer off loopback); absent when they can. */
  grantsUnavailable?: string | undefined;
  members: MemberGrants[];
  /** How many members the team's index holds (more than `members` when the page cut the list). */
  total: number;
}

const utc = (iso: string) => `${iso.replace("T", " ").replace(/\.\d+Z$/, "").replace(/Z$/, "")} UTC`;

function GrantRows({ base, member, grants, csrf }: { base: string; member: string; grants: GrantInfo[]; csrf: string }) {
  if (grants.length === 0) return <p>No grants: no host holds a token of theirs.</p>;
  return (
    <div class="scroll" role="region" aria-label={`Grants of ${member}`} tabindex={0}>
      <table class="audit">
        <caption>Their grants, one per host they signed in from (never a token)</caption>
        <thead>
          <tr>
            <th scope="col">Client</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Scopes</th>
            <th scope="col">Revoke</th>
          </tr>
        </thead>
        <tbody>
          {grants.map((g) => (
            <tr data-grant={g.id}>
              <td>{g.clientName ?? <code>{g.clientId}</code>}</td>
              <td>{utc(g.createdAt)}</td>
              <td>{g.expiresAt ? utc(g.expiresAt) : "never by itself"}</td>
              <td>{g.scope.join(" ")}</td>
              <td>
                <PostButton action={`${base}/members/${member}/grants/${g.id}/revoke`} csrf={csrf} label={`Revoke the grant of ${g.clientName ?? g.clientId}`} text="Revoke" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Member({ team, base, entry, csrf, canChange }: { team: string; base: string; entry: MemberGrants; csrf: string; canChange: boolean }) {
  const { member, grants, complete } = entry;
  const who = member.email ?? member.sub;
  return (
    <section class="server" data-member={member.id}>
      <h3>{who}</h3>
      <dl class="figures">
        <div class="total">
          <dt>Id</dt>
          <dd>
            <code>{member.id}</code>
          </dd>
        </div>
        <div class="total">
          <dt>Subject at the provider</dt>
          <dd>{member.sub}</dd>
        </div>
        <div class="total">
          <dt>Groups at the provider</dt>
          <dd data-groups="">{member.groups === undefined ? "not recorded (signed in before groups were kept)" : member.groups.length === 0 ? "none" : member.groups.join(", ")}</dd>
        </div>
        <div class="total">
          <dt>Email verified</dt>
          <dd>{member.emailVerified === undefined ? "not recorded" : member.emailVerified ? "yes" : "no"}</dd>
        </div>
        <div class="total">
          <dt>First sign-in</dt>
          <dd>{utc(member.firstSeen)}</dd>
        </div>
        <div class="total">
          <dt>Last sign-in</dt>
          <dd>{utc(member.lastSeen)}</dd>
        </div>
      </dl>
      {!canChange ? null : grants === undefined ? (
        <p>{`Grants not read: this page reads ${MAX_GRANTS_LISTED} grants at most, spent on the members above. GET /admin/teams/${team}/users/${member.id} lists theirs.`}</p>
      ) : (
        <>
          <GrantRows base={base} member={member.id} grants={grants} csrf={csrf} />
          {complete ? null : <p>{`More grants than shown: GET /admin/teams/${team}/users/${member.id} lists up to ${MAX_GRANTS_LISTED}.`}</p>}
        </>
      )}
      {canChange ? (
        <PostButton action={`${base}/members/${member.id}/remove`} csrf={csrf} label={`Remove member ${who}`} text="Remove member" />
      ) : null}
    </section>
  );
}

export function MembersSection({ team, base, read, csrf }: { team: string; base: string; read: MembersRead; csrf: string }) {
  const canChange = read.grantsUnavailable === undefined;
  return (
    <>
      <h2>Members</h2>
      <p class="hint">
        People who signed in through the team's identity provider, with the email and groups it gave at their last
        sign-in (what policies and dashboard_admins select by; a group change at the provider shows here at their next
        sign-in). Revoking a grant ends that host's tokens; removing a member revokes every grant, deletes their
        accounts at OAuth upstreams and then their entry. They can sign in again while the provider admits them.
      </p>
      {read.idp ? null : <p>{`Team ${team} has no identity provider: nobody signs in to it through OAuth (set one with PUT /admin/teams/${team}/oauth or npm run team -- oauth set).`}</p>}
      {canChange ? null : <p>{`${read.grantsUnavailable} The members are listed without their grants, and cannot be removed here.`}</p>}
      {read.members.length === 0 ? <p>Nobody has signed in to this team.</p> : null}
      {read.total > read.members.length ? (
        <p>{`Showing the ${read.members.length} members who signed in most recently, of ${read.total}: GET /admin/teams/${team}/users lists them all.`}</p>
      ) : null}
      {read.members.map((entry) => (
        <Member team={team} base={base} entry={entry} csrf={csrf} canChange={canChange} />
      ))}
    </>
  );
}
