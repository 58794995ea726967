// A team's members and tokens as a page, `/dashboard/teams/<team>/members`: the members and their grants first
// (members-section.tsx), then each token's id, label, view and when it was minted (never a token), a form to mint one
// (label, view) and a button to revoke each. A minted token is shown once, on the answer to the mint, and nowhere after.
import type { UserRemoved } from "../admin/schemas.ts";
import type { TokenInfo } from "../../store/store.ts";
import { CSRF_FIELD } from "./csrf.ts";
import { Layout } from "./layout.tsx";
import { PostButton } from "./post-button.tsx";
import { MembersSection, type MembersRead } from "./members-section.tsx";
import { TeamNav } from "./team-nav.tsx";
import type { TeamScope } from "./team-scope.ts";

export interface TokensPageProps {
  team: string;
  tokens: TokenInfo[];
  members: MembersRead;
  scope: TeamScope;
  /** A token just minted: shown once, here. */
  minted?: { id: string; token: string } | undefined;
  /** What a refused form said was wrong. */
  problem?: string | undefined;
  /** A token just revoked. */
  revoked?: string | undefined;
  /** A member's grant just revoked. */
  grantRevoked?: { member: string; grant: string } | undefined;
  /** A member just removed, and what went with them. */
  memberRemoved?: UserRemoved | undefined;
}

/** What removing a member did, in a sentence. */
function removedSentence(r: UserRemoved): string {
  const accounts = r.accountsDeleted ? `, ${r.accountsDeleted} account(s) at OAuth upstreams deleted` : "";
  const rest = r.complete ? (r.userDeleted ? " and their entry deleted." : ".") : ": more grants remain, remove them again.";
  return `Member ${r.id}: ${r.grantsRevoked} grant(s) revoked${accounts}${rest}`;
}

function MintForm({ base, csrf }: { base: string; csrf: string }) {
  return (
    <form method="post" action={`${base}/tokens`} class="filters">
      <input type="hidden" name={CSRF_FIELD} value={csrf} />
      <label>
        Label
        <input type="text" name="label" maxlength={100} placeholder="what the token is for: ci-bot" />
      </label>
      <label>
        View
        <select name="view">
          <option value="">the team's default</option>
          <option value="meta">meta</option>
          <option value="direct">direct</option>
          <option value="code">code</option>
        </select>
      </label>
      <button type="submit">Mint a token</button>
    </form>
  );
}

function TokenRows({ base, tokens, csrf }: { base: string; tokens: TokenInfo[]; csrf: string }) {
  if (tokens.length === 0) return <p>The team has no tokens.</p>;
  return (
    <div class="scroll" role="region" aria-label="Tokens" tabindex={0}>
    <table class="audit">
      <caption>The team's tokens (their ids: a token itself is never shown again)</caption>
      <thead>
        <tr>
          <th scope="col">Id</th>
          <th scope="col">Label</th>
          <th scope="col">View</th>
          <th scope="col">Minted (UTC)</th>
          <th scope="col">Revoke</th>
        </tr>
      </thead>
      <tbody>
        {tokens.map((t) => (
          <tr data-token={t.id}>
            <td>
              <code>{t.id}</code>
            </td>
            <td>{t.label ?? "–"}</td>
            <td>{t.view ?? "default"}</td>
            <td>{t.createdAt ? t.createdAt.replace("T", " ").replace(/\.\d+Z$/, "") : "–"}</td>
            <td>
              <PostButton action={`${base}/tokens/${t.id}/revoke`} csrf={csrf} label={`Revoke token ${t.id}`} text="Revoke" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}

export function TokensPage({ team, tokens, members, scope, minted, problem, revoked, grantRevoked, memberRemoved }: TokensPageProps) {
  return (
    <Layout title={`${team}: members and tokens`} csrf={scope.csrf} home={scope.home}>
      <TeamNav scope={scope} current="members" />
      {problem ? (
        <p role="alert" class="error">
          {problem}
        </p>
      ) : null}
      {minted ? (
        <div role="status" class="minted">
          <p>
            Token <code>{minted.id}</code> minted. Copy it now: it is shown this once and never again.
          </p>
          <p>
            <code data-minted-token>{minted.token}</code>
          </p>
        </div>
      ) : null}
      {revoked ? <p role="status">{`Token ${revoked} revoked: requests bearing it are refused (an isolate that had it cached keeps it for TOKEN_CACHE_SECONDS at most).`}</p> : null}
      {grantRevoked ? <p role="status">{`Grant ${grantRevoked.grant} of ${grantRevoked.member} revoked with its tokens: its refresh token no longer works, and its access token is refused once no isolate holds it cached (TOKEN_CACHE_SECONDS at most).`}</p> : null}
      {memberRemoved ? <p role="status">{removedSentence(memberRemoved)}</p> : null}
      <MembersSection team={team} base={scope.base} read={members} csrf={scope.csrf} />
      <h2>Tokens</h2>
      <MintForm base={scope.base} csrf={scope.csrf} />
      <TokenRows base={scope.base} tokens={tokens} csrf={scope.csrf} />
    </Layout>
  );
}
