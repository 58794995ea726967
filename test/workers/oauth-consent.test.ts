// What the consent page and the authorization request take from a client: its name, shown so that it cannot pose as
// another (bidirectional overrides and invisible characters refused at registration, removed with a warning on the
// page), and its redirect URI (exactly as registered, but for a loopback one's port: RFC 8252 §7.3).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { authorizationServer } from "../../src/edge/oauth/server.ts";
import { pageText } from "../shared/oauth-driver.ts";
import { pkce } from "./oauth-helpers.ts";
import { BASE, HOST_REDIRECT, authorizeUrl, proxyFetch, register, teamWithIdp } from "./sign-in-helpers.ts";

/** Format and control characters: none may reach the page. */
const HIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** The consent page (or the local refusal) for an authorization request of `clientId`. */
async function consentFor(team: string, clientId: string, change: Record<string, string> = {}) {
  const { challenge } = await pkce();
  const res = await proxyFetch(authorizeUrl(team, clientId, challenge, change));
  return { status: res.status, html: await res.text() };
}

const registration = (team: string, metadata: Record<string, unknown>) =>
  proxyFetch(`${BASE}/t/${team}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [HOST_REDIRECT], token_endpoint_auth_method: "none", ...metadata }),
  });

describe("a client's name on the consent page", () => {
  it("shows a name with a right-to-left override without it, isolated, and warns that it was altered", async () => {
    await teamWithIdp("cn-override");
    // Stored as a client registered before the rule, or named by its metadata document, would be.
    const api = authorizationServer(BASE, "cn-override").getOAuthApi(env);
    const client = await api.createClient({ redirectUris: [HOST_REDIRECT], tokenEndpointAuthMethod: "none", clientName: "Evil \u202Eedualc\u202C\u200B Host" });
    const page = await consentFor("cn-override", client.clientId);
    expect(page.status).toBe(200);
    expect(page.html).not.toMatch(HIDDEN);
    expect(page.html).toContain("<strong><bdi>Evil edualc Host</bdi></strong>");
    expect(page.html).toContain("<title>Allow Evil edualc Host?</title>");
    expect(pageText(page.html)).toContain("held invisible characters that can make it read as another name");
  });

  it("refuses to register a name holding bidirectional or invisible characters, and shows any other script as it is", async () => {
    await teamWithIdp("cn-register");
    for (const name of ["Claude\u202E", "Cla\u200Bude", "Host\u2066x\u2069", "Tab\tName"]) {
      const refused = await registration("cn-register", { client_name: name });
      expect(refused.status, JSON.stringify(name)).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_client_metadata" });
    }
    expect((await registration("cn-register", { client_name: "Host", "client_name#ar": "مضيف\u202E" })).status).toBe(400);
    const clientId = await register("cn-register", "مضيف Клиент");
    const page = await consentFor("cn-register", clientId);
    expect(page.html).toContain("<bdi>مضيف Клиент</bdi>");
    expect(pageText(page.html)).not.toContain("invisible characters");
  });
});

describe("redirect URIs", () => {
  it("takes a loopback redirect URI on any port (RFC 8252 §7.3); anything else, and a loopback one's path, only exactly", async () => {
    await teamWithIdp("cn-redirect");
    const registered = await registration("cn-redirect", { redirect_uris: ["http://127.0.0.1/callback", "https://host.example/cb"], client_name: "Native Host" });
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    for (const uri of ["http://127.0.0.1/callback", "http://127.0.0.1:53412/callback", "https://host.example/cb"]) {
      expect((await consentFor("cn-redirect", clientId, { redirect_uri: uri })).status, uri).toBe(200);
    }
    for (const uri of ["http://127.0.0.1:53412/other", "http://127.0.0.2/callback", "https://host.example:8443/cb", "https://host.example/cb/"]) {
      expect((await consentFor("cn-redirect", clientId, { redirect_uri: uri })).status, uri).toBe(400);
    }
  });
});
