// Who the team's policies are decided for (src/config/subject.ts), from the router to the views' CallSession in both
// eras: a labelled team token, and members signed in at the team's real OpenID provider (harness/idp.ts, started by
// global-setup; its control server moves a member between groups), whose groups and verified email go with the grant
// and are renewed at each refresh. What the views read is the object's runtime's own CallSession
// (SessionObject.viewSubject). A subject header a client sends is the client's, never the router's.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { Subject } from "../../src/config/subject.ts";
import type { SessionObject } from "../../src/session/object.ts";
import { tokenId } from "../../src/auth/token.ts";
import { userIdFor } from "../../src/auth/user.ts";
import { authorizationServer, teamResource } from "../../src/edge/oauth/server.ts";
import { signInAs } from "../shared/oauth-driver.ts";
import { replayStats, replayUrl, rpcText, seedTeam, waitFor } from "./helpers.ts";
import { mintAccessToken, pkce } from "./oauth-helpers.ts";
import { BASE, authorizeUrl, exchange, form, member, proxyFetch, redirected, register, store, teamWithIdp } from "./sign-in-helpers.ts";

const MODERN = "2026-07-28";
/** What a client might send to pass for someone else: the router's own header name. */
const FORGED = { "x-dynmcp-subject": JSON.stringify({ kind: "member", id: "someone", email: "boss@example.com", groups: ["admins"] }) };

const mcp = (team: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  proxyFetch(`${BASE}/t/${team}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });

/** A 2025 session opened with `token`: its id. */
async function openSession(team: string, token: string, headers: Record<string, string> = {}): Promise<string> {
  const init = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "subject-host", version: "1" } };
  const res = await mcp(team, token, { jsonrpc: "2.0", id: 1, method: "initialize", params: init }, headers);
  expect(res.status).toBe(200);
  await res.text();
  return res.headers.get("mcp-session-id")!;
}

/** A tools/list in the 2025 session `sessionId`, with `token` (a refreshed one may replace the first). */
async function listIn(team: string, token: string, sessionId: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await mcp(team, token, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25", ...headers });
  expect(res.status).toBe(200);
  await res.text();
}

/** A 2026-07-28 tools/list: answered by the principal's object. */
async function listModern(team: string, token: string, headers: Record<string, string> = {}): Promise<void> {
  const envelope = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const res = await mcp(team, token, { jsonrpc: "2.0", id: 3, method: "tools/list", params: { _meta: envelope } }, { "mcp-protocol-version": MODERN, "mcp-method": "tools/list", ...headers });
  expect(res.status).toBe(200);
  await res.text();
}

/**
 * What the echo upstream (harness/echo-upstream.ts) says it was sent, called through the meta view: in the 2025
 * session `sessionId`, or as a 2026 request when there is none.
 */
async function echoedHeaders(team: string, token: string, sessionId?: string): Promise<string> {
  const params = { name: "use_tool", arguments: { tool_name: "echo/echo_headers", tool_input: {} } };
  const envelope = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };
  const res = sessionId
    ? await mcp(team, token, { jsonrpc: "2.0", id: 5, method: "tools/call", params }, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" })
    : await mcp(team, token, { jsonrpc: "2.0", id: 6, method: "tools/call", params: { ...params, _meta: envelope } }, { "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "use_tool" });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toContain("content-type");
  return text;
}

/** The subject the views of object `<team>/<id>` read in their CallSession. */
const viewSubject = (team: string, id: string): Promise<Subject | undefined> =>
  runInDurableObject(env.SESSIONS.getByName(`${team}/${id}`), (object: SessionObject) => object.viewSubject());

/** The grant binding an access token speaks for (a member's 2026 object is `p.g.<binding>`), and its props. */
async function validated(team: string, token: string) {
  const result = await authorizationServer(BASE, team).validateToken<Record<string, unknown>>(teamResource(BASE, team), token, env);
  return { binding: String(result!.props["binding"]), props: result!.props };
}

const refresh = async (team: string, clientId: string, refreshToken: string) => {
  const res = await proxyFetch(`${BASE}/t/${team}/oauth/token`, form({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }));
  return { status: res.status, body: (await res.json()) as { access_token?: string; refresh_token?: string; error?: string; error_description?: string } };
};

/** Moves an account of the teams' IdP to these groups (global-setup's control server). */
async function setGroups(sub: string, groups: string[]): Promise<void> {
  const res = await fetch(`${env.OAUTH_UPSTREAM_CONTROL}/idp/groups/${sub}`, { method: "PUT", body: JSON.stringify(groups) });
  expect(res.status).toBe(200);
}

/** `account` signed in through a host of `team`: the host's client id and tokens. */
async function signedIn(team: string, account: string) {
  const clientId = await register(team);
  const { verifier, challenge } = await pkce();
  const back = redirected(await signInAs(authorizeUrl(team, clientId, challenge), member(account)));
  const tokens = await exchange(team, clientId, back.searchParams.get("code")!, verifier);
  expect(tokens.status).toBe(200);
  return { clientId, accessToken: tokens.body.access_token!, refreshToken: tokens.body.refresh_token! };
}

describe("the subject of a team token", () => {
  it("carries the token's label to the views of a 2025 session and of its 2026 object; a client's own subject header is ignored", async () => {
    await seedTeam("cs-token", { mcp: { memory: { url: replayUrl("memory") } } });
    // A label in any script travels (the header is ASCII: src/auth/subject-header.ts).
    const minted = await store().mintToken("cs-token", "ci-bot déploiement ✓");
    const expected: Subject = { kind: "token", id: minted.id, label: "ci-bot déploiement ✓" };
    expect(tokenId(minted.token)).toBe(minted.id);

    const sessionId = await openSession("cs-token", minted.token, FORGED);
    await listIn("cs-token", minted.token, sessionId, FORGED);
    expect(await viewSubject("cs-token", sessionId)).toEqual(expected);

    await listModern("cs-token", minted.token, FORGED);
    expect(await viewSubject("cs-token", `p.${minted.id}`)).toEqual(expected);

    // A token without a label: no label.
    const plain = await store().mintToken("cs-token");
    await listModern("cs-token", plain.token);
    expect(await viewSubject("cs-token", `p.${plain.id}`)).toEqual({ kind: "token", id: plain.id });
  });
});

describe("the subject of a signed-in member", () => {
  it("carries the member's verified email and groups in both eras, renewed through the provider at each refresh; a member the rules no longer admit loses the grant", async () => {
    await setGroups("dave", ["mcp-users", "eng"]);
    const out = vi.spyOn(console, "log");
    try {
      await teamWithIdp("cs-member", { allowed_groups: ["mcp-users"] });
      await seedTeam("cs-member", { mcp: { memory: { url: replayUrl("memory") }, echo: { url: env.ECHO_LEGACY_URL } } });
      const first = await signedIn("cs-member", "dave");
      const id = await userIdFor("cs-member", env.IDP_ISSUER, "dave");
      const { binding, props } = await validated("cs-member", first.accessToken);
      // The provider's refresh token stays in the grant: an access token's props never carry it.
      expect(props["idpRefreshToken"]).toBeUndefined();
      expect(props["member"]).toEqual({ emailVerified: true, groups: ["mcp-users", "eng"] });

      const sessionId = await openSession("cs-member", first.accessToken, FORGED);
      await listIn("cs-member", first.accessToken, sessionId);
      const atSignIn: Subject = { kind: "member", id, email: "dave@example.com", groups: ["mcp-users", "eng"] };
      expect(await viewSubject("cs-member", sessionId)).toEqual(atSignIn);
      await listModern("cs-member", first.accessToken, FORGED);
      expect(await viewSubject("cs-member", `p.g.${binding}`)).toEqual(atSignIn);
      // Nothing of it reaches an upstream, in either era.
      for (const echoed of [await echoedHeaders("cs-member", first.accessToken, sessionId), await echoedHeaders("cs-member", first.accessToken)]) {
        for (const part of ["x-dynmcp-subject", "dave@example.com", "mcp-users"]) expect(echoed).not.toContain(part);
      }

      // Moved to other groups at the provider: the next refresh learns them, and the live session's next request brings them.
      await setGroups("dave", ["ops", "mcp-users"]);
      const second = await refresh("cs-member", first.clientId, first.refreshToken);
      expect(second.status).toBe(200);
      await listIn("cs-member", second.body.access_token!, sessionId);
      const moved: Subject = { ...atSignIn, groups: ["mcp-users", "ops"] };
      expect(await viewSubject("cs-member", sessionId)).toEqual(moved);
      await listModern("cs-member", second.body.access_token!);
      expect(await viewSubject("cs-member", `p.g.${binding}`)).toEqual(moved);
      expect((await validated("cs-member", second.body.access_token!)).props["idpRefreshToken"]).toBeUndefined();

      // Out of every allowed group: the refresh is refused and the grant is gone with its tokens.
      await setGroups("dave", ["eng"]);
      const third = await refresh("cs-member", first.clientId, second.body.refresh_token!);
      expect(third.status).toBe(400);
      expect(third.body.error).toBe("invalid_grant");
      expect(third.body.error_description).toContain("membership of an allowed group");
      expect((await mcp("cs-member", second.body.access_token!, { jsonrpc: "2.0", id: 4, method: "tools/list" }, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" })).status).toBe(401);

      // The log lines name the member by id only: no email, no group, no subject. The audit trail's lines are the
      // exception the audit contract makes: they name a member by id and verified email (never groups), for a SIEM.
      const all = out.mock.calls.map((args) => String(args[0]));
      const lines = all.filter((line) => !line.includes('"event":"audit"')).join("\n");
      expect(lines).toContain(id);
      for (const part of ["dave@example.com", "mcp-users", "x-dynmcp-subject", '"groups"']) expect(lines).not.toContain(part);
      const audits = all.filter((line) => line.includes('"event":"audit"')).join("\n");
      for (const part of ["mcp-users", "x-dynmcp-subject", '"groups"']) expect(audits).not.toContain(part);
    } finally {
      out.mockRestore();
      await setGroups("dave", ["mcp-users", "eng"]);
    }
  });

  it("decides a member's tools by its groups of the moment: a change at a refresh filters the live session's catalog anew, and a call the new groups hide is refused at once", async () => {
    await setGroups("dave", ["mcp-users", "eng"]);
    try {
      await teamWithIdp("cs-policy", { allowed_groups: ["mcp-users"] });
      await seedTeam("cs-policy", { mcp: { mem: { url: replayUrl("pol-member") } }, policies: [{ who: ["group:eng"], allow: ["mem/read_graph"] }] });
      const first = await signedIn("cs-policy", "dave");
      const sessionId = await openSession("cs-policy", first.accessToken);
      const session = { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" };
      const catalog = async (token: string): Promise<string> => {
        const answer = JSON.parse(await rpcText(await mcp("cs-policy", token, { jsonrpc: "2.0", id: 7, method: "tools/list" }, session)));
        return (answer.result.tools as Array<{ name: string; description: string }>).find((t) => t.name === "discover_tool")!.description;
      };
      const create = async (token: string): Promise<string> => {
        const params = { name: "use_tool", arguments: { tool_name: "mem/create_entities", tool_input: { entities: [] } } };
        return rpcText(await mcp("cs-policy", token, { jsonrpc: "2.0", id: 8, method: "tools/call", params }, session));
      };
      expect(await catalog(first.accessToken)).toContain("- read_graph: ");
      expect(await catalog(first.accessToken)).not.toContain("create_entities");
      expect(await create(first.accessToken)).toContain('Unknown tool: \\"mem/create_entities\\". Available tools (closest first): mem/read_graph.');

      // Out of `eng`: its allow rule no longer narrows dave's tools; the session's catalog is read anew for the new groups.
      await setGroups("dave", ["mcp-users"]);
      const second = await refresh("cs-policy", first.clientId, first.refreshToken);
      expect(second.status).toBe(200);
      expect(await waitFor(async () => (await catalog(second.body.access_token!)).includes("- create_entities: "))).toBe(true);

      // Back in `eng`: the request that brings the groups is decided on them, whatever the catalog still shows.
      await setGroups("dave", ["mcp-users", "eng"]);
      const third = await refresh("cs-policy", first.clientId, second.body.refresh_token!);
      expect(third.status).toBe(200);
      expect(await create(third.body.access_token!)).toContain('Unknown tool: \\"mem/create_entities\\"');
      expect(await waitFor(async () => !(await catalog(third.body.access_token!)).includes("create_entities"))).toBe(true);
      expect((await replayStats("pol-member")).calls.filter((c) => c.name === "create_entities")).toEqual([]);
    } finally {
      await setGroups("dave", ["mcp-users", "eng"]);
    }
  });

  it("keeps the groups of sign-in when the provider gave no refresh token, and ends the grant at its refresh once an admin narrows who may sign in", async () => {
    // bob (groups mcp-users) gets no refresh token from the provider.
    await teamWithIdp("cs-kept", { allowed_groups: ["mcp-users"] });
    const first = await signedIn("cs-kept", "bob");
    const id = await userIdFor("cs-kept", env.IDP_ISSUER, "bob");
    const second = await refresh("cs-kept", first.clientId, first.refreshToken);
    expect(second.status).toBe(200);
    const { binding } = await validated("cs-kept", second.body.access_token!);
    await listModern("cs-kept", second.body.access_token!);
    expect(await viewSubject("cs-kept", `p.g.${binding}`)).toEqual({ kind: "member", id, email: "bob@other.test", groups: ["mcp-users"] });

    expect((await store().putIdp("cs-kept", { issuer: env.IDP_ISSUER, client_id: env.IDP_CLIENT_ID, client_secret: "IDP_SECRET", allowed_groups: ["admins"] })).ok).toBe(true);
    const third = await refresh("cs-kept", first.clientId, second.body.refresh_token!);
    expect(third.status).toBe(400);
    expect(third.body.error).toBe("invalid_grant");
  });

  it("leaves an email the provider did not verify out of the subject", async () => {
    await teamWithIdp("cs-unverified", { allowed_groups: ["mcp-users"] });
    const first = await signedIn("cs-unverified", "erin");
    const { binding } = await validated("cs-unverified", first.accessToken);
    await listModern("cs-unverified", first.accessToken);
    const id = await userIdFor("cs-unverified", env.IDP_ISSUER, "erin");
    expect(await viewSubject("cs-unverified", `p.g.${binding}`)).toEqual({ kind: "member", id, groups: ["mcp-users"] });
  });

  it("serves a grant made before groups were kept as one with no groups and no email, before and after its refresh", async () => {
    await seedTeam("cs-old", { mcp: { memory: { url: replayUrl("memory") } } });
    const user = "cs-old.AAAAAAAAAAAAAAAAAAAAAA";
    // Props as sign-in wrote them until now: team, binding, user (with an email, verified or not: unknown).
    const old = await mintAccessToken("cs-old", user);
    const sessionId = await openSession("cs-old", old.accessToken);
    await listIn("cs-old", old.accessToken, sessionId);
    const none: Subject = { kind: "member", id: user, groups: [] };
    expect(await viewSubject("cs-old", sessionId)).toEqual(none);

    const renewed = await refresh("cs-old", old.clientId, old.refreshToken);
    expect(renewed.status).toBe(200);
    await listIn("cs-old", renewed.body.access_token!, sessionId);
    expect(await viewSubject("cs-old", sessionId)).toEqual(none);
    await listModern("cs-old", renewed.body.access_token!);
    expect(await viewSubject("cs-old", `p.g.${old.binding}`)).toEqual(none);
  });
});
