// The teams whose members sign in through the test IdP in the workers tests (test/workers/oauth-sign-in.test.ts,
// upstream-connect.test.ts):
// the IdP fixture registers each team's callback up front (redirect URIs match exactly), so each test names its own.
export const SIGN_IN_BASE = "http://localhost:8787";
export const SIGN_IN_TEAMS = ["si-flow", "si-sdk", "si-v1", "si-deny", "si-cancel", "si-domain", "si-groups", "si-replay", "si-audience", "si-unverified", "si-users", "si-cimd", "uo-user", "uo-url", "uc-member", "uc-other", "uc-nocookie", "uc-msi", "ru-scope", "cs-member", "cs-kept", "cs-unverified", "cs-policy", "ta-user", "ta-domain", "ta-group", "ta-other", "ta-removed", "ta-csrf", "ta-pages", "dm-members"] as const;
export const signInCallback = (team: string): string => `${SIGN_IN_BASE}/t/${team}/oauth/callback`;
