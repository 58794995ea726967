// What a connect link (src/edge/oauth/upstream-connect.ts) can be made to do by someone else than the one it was made for:
// an admin's shared-account link works once and never replaces a connected account (an admin disconnects it first),
// and a link that does not check out says nothing of which servers a team has. Against the OAuth upstream fixture
// (harness/oauth-upstream.ts); each "browser" is the fetch driver with its own cookie jar.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { userIdFor } from "../../src/auth/user.ts";
import { memberCookie } from "../../src/edge/oauth/member-cookie.ts";
import { pageText, signInAs } from "../shared/oauth-driver.ts";
import { SIGN_IN_BASE as BASE } from "../shared/sign-in-teams.ts";
import { adminFetch } from "./helpers.ts";
import { SERVER, browser, captureConsole, index, link, oauthTeam, page, proxy, sealedCredential } from "./upstream-oauth-helpers.ts";

const logged = captureConsole();

const upstreamOrigin = () => new URL(env.OAUTH_UPSTREAM_URL).origin;
const disconnect = (team: string) => adminFetch("DELETE", `/teams/${team}/upstreams/${SERVER}/accounts/shared`);

describe("an admin's connect link for the team's shared account", () => {
  it("opened in a second browser after the connect, signed in as another account, replaces nothing", async () => {
    await oauthTeam("ucl-reuse", { mode: "shared" });
    const url = await link("ucl-reuse", "shared");
    expect(page(await signInAs(url, browser("alice"))).status).toBe(200);
    const connected = await sealedCredential("ucl-reuse", "shared");

    const second = await signInAs(url, browser("bob"));
    const end = page(second);
    expect(end.status).toBe(409);
    expect(end.text).toContain("Team ucl-reuse's shared account is already connected to up. To connect another, an admin disconnects it first (npm run team -- oauth disconnect ucl-reuse up shared), then makes a new link.");
    // Never sent to the upstream's authorization server; the credential is the first one.
    expect(second.trail.steps.some((s) => s.url.startsWith(upstreamOrigin()))).toBe(false);
    expect(await sealedCredential("ucl-reuse", "shared")).toEqual(connected);
  });

  it("works once: a second browser cannot use a link the first opened, even after a disconnect; a new link can", async () => {
    await oauthTeam("ucl-once", { mode: "shared" });
    const url = await link("ucl-once", "shared");
    // The first browser opens it and gives up at the upstream's sign-in: nothing is connected, the link is spent.
    const abandoned = page(await signInAs(url, browser("alice", { cancelAtIdp: true })));
    expect(abandoned.status).toBe(400);
    expect(await index("ucl-once").listCredentials("ucl-once")).toEqual([]);

    const second = await signInAs(url, browser("bob"));
    const end = page(second);
    expect(end.status).toBe(400);
    expect(end.text).toContain("This connect link was already used (a link works once): ask an admin for a new one.");
    expect(second.trail.steps.some((s) => s.url.startsWith(upstreamOrigin()))).toBe(false);
    expect(await index("ucl-once").listCredentials("ucl-once")).toEqual([]);

    // A new link connects; once connected, the used one stays refused after a disconnect too.
    expect(page(await signInAs(await link("ucl-once", "shared"), browser("bob"))).status).toBe(200);
    expect((await disconnect("ucl-once")).status).toBe(204);
    expect(page(await signInAs(url, browser("alice"))).text).toContain("This connect link was already used");
    expect(await index("ucl-once").listCredentials("ucl-once")).toEqual([]);
    expect(logged.some((l) => l.includes('"reason":"This connect link was already used'))).toBe(true);
  });

  it("does not replace an account connected while its flow was at the upstream, and connects again after a disconnect", async () => {
    await oauthTeam("ucl-race", { mode: "shared" });
    const [first, second] = [await link("ucl-race", "shared"), await link("ucl-race", "shared")];
    let firstDone = false;
    // Bob's browser is at the upstream's sign-in when Alice's connect (another link, another browser) finishes.
    const bob = await signInAs(second, browser("bob", {
      proxy: async (request) => {
        if (new URL(request.url).pathname === "/oauth/upstream/callback" && !firstDone) {
          firstDone = true;
          expect(page(await signInAs(first, browser("alice"))).status).toBe(200);
        }
        return proxy(request);
      },
    }));
    expect(firstDone).toBe(true);
    const connected = await sealedCredential("ucl-race", "shared");
    const end = page(bob);
    expect(end.status).toBe(409);
    expect(end.path).toBe("/oauth/upstream/callback");
    expect(end.text).toContain("Team ucl-race's shared account is already connected to up.");
    expect(await sealedCredential("ucl-race", "shared")).toEqual(connected);

    // The explicit way: disconnect, then a new link.
    expect((await disconnect("ucl-race")).status).toBe(204);
    expect(page(await signInAs(await link("ucl-race", "shared"), browser("bob"))).status).toBe(200);
    expect((await sealedCredential("ucl-race", "shared")).accessToken).not.toBe(connected.accessToken);
  });
});

describe("the team index's credentials", () => {
  it("stores one of two shared accounts connected at the same moment, and keeps it", async () => {
    const credential = (accessToken: string) => ({
      issuer: "https://as.example",
      resource: env.OAUTH_UPSTREAM_URL,
      tokenEndpoint: "https://as.example/token",
      clientId: "c",
      authMethod: "none" as const,
      accessToken,
      connectedAt: new Date().toISOString(),
    });
    const added = await Promise.all(["first", "second", "third"].map((t) => index("ucl-same-time").addCredential("ucl-same-time", SERVER, "shared", credential(t))));
    expect(added.filter(Boolean)).toHaveLength(1);
    const kept = ["first", "second", "third"][added.indexOf(true)];
    expect((await sealedCredential("ucl-same-time", "shared")).accessToken).toBe(kept);
  });
});

describe("the end of a connect", () => {
  it("is the proxy's own page, whatever the stored connect says (no way back to a path like /\\evil.example)", async () => {
    await oauthTeam("ucl-return", { mode: "shared" });
    // What a `returnTo` in the stored connect could do: `/\evil.example` starts with one slash, and a browser reads it
    // as `//evil.example`. Written into the connect's record at the callback, as a bug elsewhere could.
    const outcome = await signInAs(await link("ucl-return", "shared"), browser("alice", {
      proxy: async (request) => {
        const url = new URL(request.url);
        if (url.pathname === "/oauth/upstream/callback") {
          const key = `connect:${url.searchParams.get("state")}`;
          await runInDurableObject(index("ucl-return"), async (_o, state) => {
            await state.storage.put(key, { ...(await state.storage.get<object>(key)), returnTo: "/\\evil.example" });
          });
        }
        return proxy(request);
      },
    }));
    expect(outcome.kind === "redirect" ? outcome.url.href : "a page").toBe("a page");
    const end = page(outcome);
    expect(end.status).toBe(200);
    expect(end.text).toContain("Connected up for team ucl-return");
  });
});

describe("a link that does not check out", () => {
  it("answers alike whichever server it names, existing, not OAuth or made up, and whether the team exists", async () => {
    await oauthTeam("ucl-probe", { mode: "shared" }, {
      "ucl-github": { url: env.OAUTH_UPSTREAM_URL, auth: { type: "oauth", mode: "shared" } },
      plain: { url: "http://127.0.0.1:9/mcp" },
    });
    const bob = await userIdFor("ucl-probe", env.IDP_ISSUER, "bob");
    const alice = await userIdFor("ucl-probe", env.IDP_ISSUER, "alice");
    const cookieOf = async (user: string) => ({ cookie: (await memberCookie(env.SESSION_KEY!, "ucl-probe", user)).split(";")[0]! });
    // The same well-formed handles for every name: an admin's link of `ucl-github`, altered; and one of bob's links.
    const handleOf = (url: string) => new URL(url).searchParams.get("h")!;
    const altered = handleOf(await link("ucl-probe", "shared", "ucl-github")).replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    const bobs = handleOf(await link("ucl-probe", bob, "nope"));
    const probes = { cut: "cx1.abc", missing: "", altered, bobs };
    const browsers = { nobody: {}, alice: await cookieOf(alice) };

    /** Status, type and page of each probe in each browser, the team's and server's names written as placeholders. */
    const answers = async (team: string, server: string, only?: keyof typeof browsers) => {
      const out: Record<string, { status: number; type: string | null; page: string }> = {};
      for (const [name, handle] of Object.entries(probes)) {
        for (const [who, headers] of Object.entries(browsers)) {
          if (only !== undefined && who !== only) continue;
          const res = await proxy(new Request(`${BASE}/t/${team}/connect/${server}?h=${encodeURIComponent(handle)}`, { headers }));
          const page = (await res.text()).replaceAll(team, "{team}").replaceAll(server, "{server}");
          out[`${name} in ${who}'s browser`] = { status: res.status, type: res.headers.get("content-type"), page };
        }
      }
      return out;
    };
    const existing = await answers("ucl-probe", "ucl-github");
    for (const server of ["plain", "nope", "zz-made-up"]) expect(await answers("ucl-probe", server)).toEqual(existing);
    // Another team's (or no team's) page is the same too, for a browser that is no member of it.
    expect(await answers("ucl-no-such-team", "ucl-github", "nobody")).toEqual(await answers("ucl-probe", "ucl-github", "nobody"));

    // A member's well-formed link gets the member sign-in page, whether or not its server exists.
    expect(existing["bobs in nobody's browser"]!.status).toBe(200);
    expect(pageText(existing["bobs in nobody's browser"]!.page)).toContain("needs to know which member of team {team} you are");
    expect(pageText(existing["bobs in alice's browser"]!.page)).toContain("This connect link was made for another member of team {team}");
    expect(existing["cut in nobody's browser"]!.status).toBe(400);

    // Only bob, signed in, learns that his link names a server the team does not have.
    const res = await proxy(new Request(`${BASE}/t/ucl-probe/connect/nope?h=${bobs}`, { headers: await cookieOf(bob) }));
    expect(res.status).toBe(404);
    expect(pageText(await res.text())).toContain("Team ucl-probe has no server named nope.");
  });
});
