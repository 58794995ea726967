// Who a signed-in member is and whether the team admits them (src/auth/user.ts), and the team's user index
// (TeamStore.recordUser / listUsers): pure rules and a KV in memory.
import { describe, expect, it } from "vitest";
import { IdpConfig } from "../../src/config/idp.ts";
import { USER_ID, admit, userIdFor } from "../../src/auth/user.ts";
import { TeamStore } from "../../src/store/store.ts";
import type { KvEntry, KvLike } from "../../src/store/kv.ts";

const idp = (rules: object) =>
  IdpConfig.parse({ issuer: "https://id.example.com", client_id: "proxy", client_secret: "IDP_SECRET", ...rules });

describe("userIdFor", () => {
  it("is stable per issuer and subject, differs across them and across teams, and has no ':'", async () => {
    const a = await userIdFor("acme", "https://id.example.com", "u-1");
    expect(a).toBe(await userIdFor("acme", "https://id.example.com", "u-1"));
    expect(a).toMatch(USER_ID);
    expect(a.startsWith("acme.")).toBe(true);
    expect(a).not.toContain(":");
    expect(await userIdFor("acme", "https://id.example.com", "u-2")).not.toBe(a);
    expect(await userIdFor("acme", "https://other.example.com", "u-1")).not.toBe(a);
    expect((await userIdFor("beta", "https://id.example.com", "u-1")).slice(5)).toBe(a.slice(5));
  });
});

describe("admit", () => {
  const claims = (extra: object) => ({ iss: "https://id.example.com", sub: "u-1", ...extra });

  it("admits a verified address in an allowed domain, case-insensitively, and refuses an unverified one", () => {
    const domains = idp({ allowed_domains: ["example.com"] });
    expect(admit(domains, claims({ email: "Ada@Example.com", email_verified: true }))).toEqual({ ok: true, email: "ada@example.com" });
    // Some providers send the flag as a string.
    expect(admit(domains, claims({ email: "ada@example.com", email_verified: "true" })).ok).toBe(true);
    expect(admit(domains, claims({ email: "ada@example.com", email_verified: false })).ok).toBe(false);
    expect(admit(domains, claims({ email: "ada@example.com" })).ok).toBe(false);
    // A subdomain or a look-alike is not the domain.
    expect(admit(domains, claims({ email: "ada@mail.example.com", email_verified: true })).ok).toBe(false);
    expect(admit(domains, claims({ email: "ada@example.com.evil.test", email_verified: true })).ok).toBe(false);
    expect(admit(domains, claims({ email: "example.com", email_verified: true })).ok).toBe(false);
  });

  it("admits a member of an allowed group from the configured claim (a list or one string)", () => {
    const groups = idp({ allowed_groups: ["mcp-users"], groups_claim: "roles" });
    expect(admit(groups, claims({ roles: ["staff", "mcp-users"] })).ok).toBe(true);
    expect(admit(groups, claims({ roles: "mcp-users" })).ok).toBe(true);
    expect(admit(groups, claims({ groups: ["mcp-users"] })).ok).toBe(false);
    expect(admit(groups, claims({ roles: [7, null] })).ok).toBe(false);
  });

  it("admits by either rule when both are set, and names the rules (never the account's groups) when it refuses", () => {
    const both = idp({ allowed_domains: ["example.com"], allowed_groups: ["mcp-users"] });
    expect(admit(both, claims({ email: "x@other.test", email_verified: true, groups: ["mcp-users"] }))).toEqual({ ok: true, email: "x@other.test" });
    const refused = admit(both, claims({ email: "x@other.test", email_verified: true, groups: ["secret-project"] }));
    expect(refused).toEqual({
      ok: false,
      reason: "this account may not sign in to this team: it needs a verified email address in an allowed domain or membership of an allowed group",
    });
  });
});

/** A KV in memory that keeps metadata, as Workers KV does. */
function memoryKv() {
  const data = new Map<string, { value: string; metadata?: unknown }>();
  let puts = 0;
  const kv: KvLike = {
    get: async (key) => data.get(key)?.value ?? null,
    put: async (key, value, metadata) => {
      puts++;
      data.set(key, { value, metadata });
    },
    delete: async (key) => void data.delete(key),
    list: async (prefix): Promise<KvEntry[]> =>
      [...data.entries()].filter(([k]) => k.startsWith(prefix)).map(([name, { metadata }]) => ({ name, metadata })),
  };
  return { kv, puts: () => puts };
}

describe("the team's user index", () => {
  it("records a member once, moves lastSeen at most daily, keeps the email current, and lists from metadata", async () => {
    const { kv, puts } = memoryKv();
    const store = new TeamStore(kv, { urlPolicy: { allowPrivate: false } });
    const seen = { sub: "u-1", issuer: "https://id.example.com", email: "ada@example.com" };
    const first = await store.recordUser("acme", "acme.AAAAAAAAAAAAAAAAAAAAAA", seen, new Date("2026-11-20T08:00:00Z"));
    expect(first).toEqual({ ...seen, firstSeen: "2026-11-20T08:00:00.000Z", lastSeen: "2026-11-20T08:00:00.000Z" });
    // Later the same day: nothing written.
    await store.recordUser("acme", "acme.AAAAAAAAAAAAAAAAAAAAAA", seen, new Date("2026-11-20T17:00:00Z"));
    expect(puts()).toBe(1);
    // The next day, with a new address: written once.
    const later = await store.recordUser("acme", "acme.AAAAAAAAAAAAAAAAAAAAAA", { ...seen, email: "ada@new.example.com" }, new Date("2026-11-21T09:00:00Z"));
    expect(later).toMatchObject({ firstSeen: "2026-11-20T08:00:00.000Z", lastSeen: "2026-11-21T09:00:00.000Z", email: "ada@new.example.com" });
    expect(puts()).toBe(2);
    expect(await store.listUsers("acme")).toEqual([{ id: "acme.AAAAAAAAAAAAAAAAAAAAAA", ...later }]);
    expect(await store.listUsers("beta")).toEqual([]);
    expect(await store.deleteUser("acme", "acme.AAAAAAAAAAAAAAAAAAAAAA")).toBe(true);
    expect(await store.getUser("acme", "acme.AAAAAAAAAAAAAAAAAAAAAA")).toBeUndefined();
  });
});
