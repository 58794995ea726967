// The pages of a team admin's sign-in: what GET /t/<team>/dashboard answers without a session (a button that starts
// the sign-in at the team's identity provider: a POST form, no password here), and the page the provider's callback
// answers once the admin is signed in, which goes on to the team's overview by itself (a refresh: a SameSite=Strict
// cookie set at the end of a redirect chain that began at another site is not sent on a redirect that follows it, but
// it is on a navigation this page starts).
import { Layout } from "./layout.tsx";

export function TeamAdminSignInPage({ team, base, provider }: { team: string; base: string; provider: string }) {
  return (
    <Layout title={`Team ${team}`} home={base}>
      <p>{`The dashboard of team ${team}, for its admins: its upstreams, tools, policies, audit trail, members and tokens.`}</p>
      <form method="post" action={`${base}/sign-in`} class="sign-in">
        <button type="submit">{`Sign in with ${provider}`}</button>
      </form>
      <p class="hint">
        You sign in at the team's identity provider; the team's config names its dashboard admins (<code>dashboard_admins</code>). A
        session lasts eight hours.
      </p>
    </Layout>
  );
}

export function TeamAdminSignedInPage({ team, base }: { team: string; base: string }) {
  return (
    <Layout title="Signed in" home={base} refresh={base}>
      <p role="status">{`You are signed in to team ${team}'s dashboard.`}</p>
      <p>
        <a href={base}>Go on to the team's overview</a>
      </p>
    </Layout>
  );
}
