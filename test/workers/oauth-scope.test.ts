// The `mcp` scope at the team's MCP URL (RFC 6750 §3.1): a member's sign-in through the test IdP with the scope a host
// asks for. A host that asks for no scope the server offers is granted `mcp`; a token without it (the host asked for
// `offline_access` alone, or narrowed a refresh to it) is refused with 403 insufficient_scope naming the scope.
import { describe, expect, it } from "vitest";
import { pageText, signInAs } from "../shared/oauth-driver.ts";
import { pkce } from "./oauth-helpers.ts";
import { BASE, authorizeUrl, exchange, form, initialize, member, proxyFetch, redirected, register, teamWithIdp } from "./sign-in-helpers.ts";

const TEAM = "ru-scope";

/** A sign-in asking for `scope` (null: the parameter left out), the code exchanged: the token endpoint's answer. */
async function signInAsking(clientId: string, scope: string | null) {
  const { verifier, challenge } = await pkce();
  const outcome = await signInAs(authorizeUrl(TEAM, clientId, challenge, { scope }), member("alice"));
  const consent = outcome.trail.steps.find((s) => s.method === "GET" && s.url.includes("/oauth/authorize") && s.status === 200)!;
  const tokens = await exchange(TEAM, clientId, redirected(outcome).searchParams.get("code")!, verifier);
  expect(tokens.status).toBe(200);
  return { consent: pageText(consent.body!), tokens: tokens.body };
}

describe("the mcp scope", () => {
  it("is granted to a host that asks for no scope the server offers, and its token works at the MCP URL", async () => {
    await teamWithIdp(TEAM);
    const clientId = await register(TEAM);
    for (const scope of ["", null, "admin"]) {
      const { consent, tokens } = await signInAsking(clientId, scope);
      expect(consent, String(scope)).toContain("use the team's MCP tools");
      expect(tokens.scope, String(scope)).toBe("mcp");
      expect((await initialize(TEAM, tokens.access_token!)).status, String(scope)).toBe(200);
    }
  });

  it("is required at the MCP URL: a token without it gets 403 insufficient_scope naming mcp and the resource metadata", async () => {
    await teamWithIdp(TEAM);
    const clientId = await register(TEAM);
    const refreshOnly = await signInAsking(clientId, "offline_access");
    expect(refreshOnly.consent).not.toContain("use the team's MCP tools");
    expect(refreshOnly.tokens.scope).toBe("offline_access");
    const refused = await initialize(TEAM, refreshOnly.tokens.access_token!);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer realm="dynmcp-edge", resource_metadata="${BASE}/.well-known/oauth-protected-resource/t/${TEAM}/mcp", scope="mcp", error="insufficient_scope"`,
    );
    expect(await refused.json()).toMatchObject({ error: "insufficient_scope" });

    // A token narrowed at a refresh to offline_access alone is refused alike; the full grant's next refresh works.
    const full = await signInAsking(clientId, "mcp offline_access");
    const narrowed = await proxyFetch(`${BASE}/t/${TEAM}/oauth/token`, form({ grant_type: "refresh_token", refresh_token: full.tokens.refresh_token!, client_id: clientId, scope: "offline_access" }));
    const narrow = (await narrowed.json()) as { access_token: string; refresh_token: string; scope: string };
    expect(narrow.scope).toBe("offline_access");
    expect((await initialize(TEAM, narrow.access_token)).status).toBe(403);
    const widened = await proxyFetch(`${BASE}/t/${TEAM}/oauth/token`, form({ grant_type: "refresh_token", refresh_token: narrow.refresh_token, client_id: clientId }));
    expect((await initialize(TEAM, ((await widened.json()) as { access_token: string }).access_token)).status).toBe(200);
  });
});
