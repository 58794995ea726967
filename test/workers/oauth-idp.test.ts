// A team's identity provider for OAuth sign-in (issue 16, increment 2), through the admin API: one schema, the
// issuer under the upstream URL guard, the client secret named (a team secret that must exist), never given.
import { describe, expect, it } from "vitest";
import { adminFetch, seedTeam, replayUrl } from "./helpers.ts";

const IDP = {
  issuer: "http://127.0.0.1:9/issuer",
  client_id: "dynmcp-proxy",
  client_secret: "IDP_SECRET",
  allowed_domains: ["Example.COM"],
};

async function team(name: string, withSecret = true) {
  await seedTeam(name, { mcp: { memory: { url: replayUrl("memory") } } });
  if (withSecret) expect((await adminFetch("PUT", `/teams/${name}/secrets/IDP_SECRET`, { value: "s3cret-value-never-shown" })).status).toBe(204);
}

describe("the identity provider of a team (admin API)", () => {
  it("stores a valid provider with its defaults, reads it back without any secret value, and removes it", async () => {
    await team("idp-ok");
    const put = await adminFetch("PUT", "/teams/idp-ok/oauth", IDP);
    expect(put.status).toBe(200);
    const stored = { ...IDP, allowed_domains: ["example.com"], groups_claim: "groups", scopes: ["openid", "email", "profile"] };
    expect(await put.json()).toEqual(stored);
    const got = await adminFetch("GET", "/teams/idp-ok/oauth");
    expect(await got.json()).toEqual(stored);
    expect(JSON.stringify(stored)).not.toContain("s3cret-value-never-shown");
    expect((await adminFetch("DELETE", "/teams/idp-ok/oauth")).status).toBe(204);
    expect((await adminFetch("GET", "/teams/idp-ok/oauth")).status).toBe(404);
    expect((await adminFetch("DELETE", "/teams/idp-ok/oauth")).status).toBe(404);
  });

  it("refuses a client secret the team does not have, naming the command that sets it", async () => {
    await team("idp-nosecret", false);
    const res = await adminFetch("PUT", "/teams/idp-nosecret/oauth", IDP);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; issues: Array<{ path: string; message: string }> };
    expect(body.error).toBe("invalid_idp");
    expect(body.issues).toEqual([{ path: "client_secret", message: expect.stringContaining("npm run team -- secret put idp-nosecret IDP_SECRET") }]);
    expect((await adminFetch("GET", "/teams/idp-nosecret/oauth")).status).toBe(404);
  });

  it("refuses a provider that does not say who may sign in, a secret value in place of a name, and a bad issuer, each by its path", async () => {
    await team("idp-bad");
    const issues = async (body: unknown) => ((await (await adminFetch("PUT", "/teams/idp-bad/oauth", body)).json()) as { issues: Array<{ path: string }> }).issues.map((i) => i.path);
    const { allowed_domains: _, ...nobody } = IDP;
    expect(await issues(nobody)).toEqual(["(root)"]);
    expect(await issues({ ...IDP, client_secret: "a literal secret!" })).toEqual(["client_secret"]);
    expect(await issues({ ...IDP, issuer: "ftp://idp.example" })).toEqual(["issuer"]);
    expect(await issues({ ...IDP, allowed_domains: ["not a domain"] })).toEqual(["allowed_domains[0]"]);
    expect(await issues({ ...IDP, extra: 1 })).toEqual(["(root)"]);
  });

  it("is in the admin API's OpenAPI document", async () => {
    const doc = (await (await adminFetch("GET", "/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/admin/teams/{team}/oauth"] ?? {}).sort()).toEqual(["delete", "get", "put"]);
  });
});
