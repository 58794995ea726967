// A code or refresh token of a team's OAuth server used twice (RFC 6749 §4.1.2 and §10.4, RFC 9700 §4.14.2): the
// attacks as a thief makes them, through the router's token endpoint. Whoever presents a secret already used, the
// second use is refused and the whole grant is revoked: the owner's tokens die with the thief's, so the owner signs in
// again and the thief is out. Ordinary rotation keeps working.
import { env } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../../src/edge/app.ts";
import { SpentSecrets } from "../../src/team/spent-secrets.ts";
import { replayUrl, seedTeam } from "./helpers.ts";
import { OAUTH_BASE, authorizeCode, codeExchange, initializeWith, mintAccessToken, withOAuth } from "./oauth-helpers.ts";

interface Tokens {
  access_token?: string;
  refresh_token?: string;
  error?: string;
}

const tokenEndpoint = async (team: string, fields: Record<string, string>) => {
  const res = await app.fetch(
    new Request(`${OAUTH_BASE}/t/${team}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    }),
    withOAuth,
    createExecutionContext(),
  );
  return { status: res.status, body: (await res.json()) as Tokens };
};
const refresh = (team: string, clientId: string, refreshToken: string) =>
  tokenEndpoint(team, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });

/** The status of an initialize at `team`'s MCP URL with this access token. */
const mcpStatus = async (team: string, accessToken: string) => (await initializeWith(team, accessToken)).status;

/** What OAUTH_KV still holds of one grant: its record and its access tokens. */
async function grantKeys(user: string, grantId: string): Promise<string[]> {
  const [grant, tokens] = await Promise.all([
    env.OAUTH_KV!.get(`grant:${user}:${grantId}`),
    env.OAUTH_KV!.list({ prefix: `token:${user}:${grantId}:` }),
  ]);
  return [...(grant === null ? [] : [`grant:${user}:${grantId}`]), ...tokens.keys.map((k) => k.name)];
}

/** Log lines written while `run` runs, as text. */
async function logged(run: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  await run();
  return lines.join("\n");
}

afterEach(() => vi.restoreAllMocks());

describe("a refresh token used twice revokes its grant", () => {
  it("the owner refreshes (rt1 → rt2), a thief replays rt1: refused every time, and the owner's rt2 and every access token die with the grant", async () => {
    await seedTeam("ru-refresh", { mcp: { memory: { url: replayUrl("memory") } } });
    const owner = await mintAccessToken("ru-refresh", "rowan");
    const rotated = await refresh("ru-refresh", owner.clientId, owner.refreshToken);
    expect(rotated.status).toBe(200);
    expect(await mcpStatus("ru-refresh", rotated.body.access_token!)).toBe(200);

    let log = "";
    const replays: Tokens[] = [];
    log = await logged(async () => {
      // The tester's five replays of the stolen rt1.
      for (let i = 0; i < 5; i++) {
        const replay = await refresh("ru-refresh", owner.clientId, owner.refreshToken);
        expect(replay.status).toBe(400);
        replays.push(replay.body);
      }
    });
    expect(replays.every((r) => r.error === "invalid_grant" && r.access_token === undefined)).toBe(true);
    // The grant is gone: the owner's rt2 and both access tokens with it.
    expect((await refresh("ru-refresh", owner.clientId, rotated.body.refresh_token!)).body.error).toBe("invalid_grant");
    expect(await mcpStatus("ru-refresh", rotated.body.access_token!)).toBe(401);
    expect(await mcpStatus("ru-refresh", owner.accessToken)).toBe(401);
    expect(await grantKeys("rowan", owner.grantId)).toEqual([]);
    // Said once in the log, whose grant and why, with no token in it.
    const line = log.split("\n").find((l) => l.includes('"oauth_reuse"'));
    expect(JSON.parse(line!)).toMatchObject({ team: "ru-refresh", kind: "refresh_token", reason: "superseded", user: "rowan", outcome: "grant_revoked" });
    for (const secret of [owner.refreshToken, rotated.body.refresh_token!, owner.accessToken]) expect(log).not.toContain(secret.split(":")[2]);
  });

  it("the thief refreshes first with the stolen rt1: the owner's next refresh with rt1 revokes the grant, the thief's tokens too", async () => {
    await seedTeam("ru-thief-first", { mcp: { memory: { url: replayUrl("memory") } } });
    const owner = await mintAccessToken("ru-thief-first", "sasha");
    const thief = await refresh("ru-thief-first", owner.clientId, owner.refreshToken);
    expect(thief.status).toBe(200);
    expect((await refresh("ru-thief-first", owner.clientId, owner.refreshToken)).status).toBe(400);
    expect(await mcpStatus("ru-thief-first", thief.body.access_token!)).toBe(401);
    expect((await refresh("ru-thief-first", owner.clientId, thief.body.refresh_token!)).status).toBe(400);
    expect(await grantKeys("sasha", owner.grantId)).toEqual([]);
  });

  it("two refreshes with one token at once: at most one answer carries tokens, and the grant is revoked", async () => {
    await seedTeam("ru-overlap", { mcp: { memory: { url: replayUrl("memory") } } });
    const owner = await mintAccessToken("ru-overlap", "tove");
    const both = await Promise.all([0, 1].map(() => refresh("ru-overlap", owner.clientId, owner.refreshToken)));
    expect(both.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    for (const issued of both.filter((r) => r.status === 200)) {
      expect(await mcpStatus("ru-overlap", issued.body.access_token!)).toBe(401);
      expect((await refresh("ru-overlap", owner.clientId, issued.body.refresh_token!)).status).toBe(400);
    }
    expect(await grantKeys("tove", owner.grantId)).toEqual([]);
  });

  it("keeps ordinary rotation working: each refresh token once, in turn, and the newest access token works", async () => {
    await seedTeam("ru-rotate", { mcp: { memory: { url: replayUrl("memory") } } });
    const owner = await mintAccessToken("ru-rotate", "uma");
    let current = owner.refreshToken;
    let access = owner.accessToken;
    for (let i = 0; i < 3; i++) {
      const next = await refresh("ru-rotate", owner.clientId, current);
      expect(next.status).toBe(200);
      expect(next.body.refresh_token).not.toBe(current);
      current = next.body.refresh_token!;
      access = next.body.access_token!;
    }
    expect(await mcpStatus("ru-rotate", access)).toBe(200);
  });
});

describe("an authorization code used twice revokes the tokens issued from it", () => {
  it("replayed by the same client or by another one: refused, and the first exchange's tokens revoked", async () => {
    await seedTeam("ru-code", { mcp: { memory: { url: replayUrl("memory") } } });
    for (const [user, replayer] of [["vera", "same"], ["wyn", "other"]] as const) {
      const grant = await authorizeCode("ru-code", user);
      const first = await tokenEndpoint("ru-code", codeExchange(grant.clientId, grant.code, grant.verifier));
      expect(first.status).toBe(200);
      expect(await mcpStatus("ru-code", first.body.access_token!)).toBe(200);
      const other = await grant.api.createClient({ redirectUris: ["http://127.0.0.1:1/callback"], tokenEndpointAuthMethod: "none", clientName: "thief" });
      const replayClient = replayer === "same" ? grant.clientId : other.clientId;
      const replay = await tokenEndpoint("ru-code", codeExchange(replayClient, grant.code, grant.verifier));
      expect(replay, replayer).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
      expect(await mcpStatus("ru-code", first.body.access_token!), replayer).toBe(401);
      expect((await refresh("ru-code", grant.clientId, first.body.refresh_token!)).status, replayer).toBe(400);
    }
  });

  it("two exchanges of one code at once: at most one answer carries tokens, and they are revoked", async () => {
    await seedTeam("ru-code-overlap", { mcp: { memory: { url: replayUrl("memory") } } });
    const grant = await authorizeCode("ru-code-overlap", "xia");
    const both = await Promise.all([0, 1].map(() => tokenEndpoint("ru-code-overlap", codeExchange(grant.clientId, grant.code, grant.verifier))));
    expect(both.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1);
    for (const issued of both.filter((r) => r.status === 200)) {
      expect(await mcpStatus("ru-code-overlap", issued.body.access_token!)).toBe(401);
    }
    expect((await grant.api.listUserGrants("xia")).items).toEqual([]);
  });
});

describe("the team index's record of spent secrets", () => {
  it("tells a second use for ten minutes at least, forgets it within a quarter hour, and sweeps what it forgot", async () => {
    const hash = "ab".repeat(32);
    const other = "cd".repeat(32);
    const start = Date.UTC(2026, 0, 1, 12, 0, 0);
    const clock = vi.spyOn(Date, "now");
    await runInDurableObject(env.TEAM_INDEX.getByName("ru-spent"), async (_index, state) => {
      const spent = new SpentSecrets(state.storage);
      clock.mockReturnValue(start);
      expect(await spent.spend(hash)).toBe(true);
      expect(await spent.spend(hash)).toBe(false);
      clock.mockReturnValue(start + 10 * 60_000 - 1);
      expect(await spent.spend(hash)).toBe(false);
      clock.mockReturnValue(start + 15 * 60_000);
      // Another secret's spend sweeps the old bucket: the first one is forgotten, and spent afresh.
      expect(await spent.spend(other)).toBe(true);
      expect([...(await state.storage.list({ prefix: "spent:" })).keys()].some((k) => k.endsWith(hash))).toBe(false);
      expect(await spent.spend(hash)).toBe(true);
      await expect(spent.spend("not-a-hash")).rejects.toThrow(/SHA-256/);
    });
  });
});
