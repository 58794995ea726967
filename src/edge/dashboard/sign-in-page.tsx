// The operator's sign-in form: what `GET /dashboard` answers without a session (200), and again with an error after a
// wrong token (401). The token field is a password field, posted to /dashboard/sign-in, never echoed back.
import { Layout } from "./layout.tsx";

export function SignInPage({ error }: { error?: string | undefined }) {
  return (
    <Layout title="Sign in">
      <p>The operator's dashboard: every team on this proxy, their usage and their audit trail.</p>
      {error === undefined ? null : (
        <p role="alert" class="error" id="sign-in-error">
          {error}
        </p>
      )}
      <form method="post" action="/dashboard/sign-in" class="sign-in">
        <label for="token">Admin token</label>
        <input
          type="password"
          id="token"
          name="token"
          autocomplete="current-password"
          required
          {...(error === undefined ? {} : { "aria-describedby": "sign-in-error", "aria-invalid": "true" })}
        />
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">
        The admin token is the Worker's <code>ADMIN_TOKEN</code> secret. A session lasts eight hours.
      </p>
    </Layout>
  );
}
