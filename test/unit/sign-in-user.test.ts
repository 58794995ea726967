// Who a signed-in member is and whether the team admits them (src/auth/user.ts), and the team's user index
// (TeamStore.recordUser / listUsers): pure rules and a KV in memory.
import { describe, expect, it } from "vitest";
import { IdpConfig } from "../../src/config/idp.ts";
import { MAX_GROUPS, MAX_GROUPS_CHARS, MAX_GROUP_CHARS, USER_ID, admit, admitMember, memberClaims, userIdFor } from "../../src/auth/user.ts";
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

describe("memberClaims: what a grant keeps of the provider's claims", () => {
  const claims = (extra: object) => ({ iss: "https://id.example.com", sub: "u-1", ...extra });

  it("keeps the email lowercased, whether it is verified, and the groups of the team's claim (a list or one string), once each", () => {
    const roles = idp({ allowed_groups: ["mcp-users"], groups_claim: "roles" });
    expect(memberClaims(roles, claims({ email: " Ada@Example.com ", email_verified: "true", roles: ["staff", "mcp-users", "staff", "", 7] }))).toEqual({
      email: "ada@example.com",
      emailVerified: true,
      // The groups that admit come first.
      groups: ["mcp-users", "staff"],
      groupsDropped: 0,
    });
    expect(memberClaims(roles, claims({ roles: "mcp-users", groups: ["other"] }))).toEqual({ emailVerified: false, groups: ["mcp-users"], groupsDropped: 0 });
    expect(memberClaims(roles, claims({ email: "ada@example.com", email_verified: false })).emailVerified).toBe(false);
  });

  it("bounds the groups by count, length and total, leaving out whole groups, never those that admit", () => {
    const groups = idp({ allowed_groups: ["admit-me"] });
    const many = Array.from({ length: 200 }, (_, i) => `group-${i}`);
    const counted = memberClaims(groups, claims({ groups: [...many, "admit-me"] }));
    expect(counted.groups).toHaveLength(MAX_GROUPS);
    expect(counted.groups[0]).toBe("admit-me");
    expect(counted.groupsDropped).toBe(201 - MAX_GROUPS);

    const long = "x".repeat(MAX_GROUP_CHARS + 1);
    expect(memberClaims(groups, claims({ groups: [long, "short"] }))).toMatchObject({ groups: ["short"], groupsDropped: 1 });

    const wide = Array.from({ length: 40 }, (_, i) => `${i}`.padEnd(MAX_GROUP_CHARS, "g"));
    const total = memberClaims(groups, claims({ groups: wide }));
    expect(total.groups.join("").length).toBeLessThanOrEqual(MAX_GROUPS_CHARS);
    expect(total.groups).toEqual(wide.slice(0, MAX_GROUPS_CHARS / MAX_GROUP_CHARS));
    expect(admit(groups, claims({ groups: [...wide, "admit-me"] })).ok).toBe(true);
  });

  it("admits on what was kept as on the claims themselves (at a refresh without the provider)", () => {
    const both = idp({ allowed_domains: ["example.com"], allowed_groups: ["mcp-users"] });
    expect(admitMember(both, { email: "ada@example.com", emailVerified: true, groups: [] })).toEqual({ ok: true, email: "ada@example.com" });
    expect(admitMember(both, { email: "ada@example.com", emailVerified: false, groups: [] }).ok).toBe(false);
    expect(admitMember(both, { emailVerified: false, groups: ["mcp-users"] })).toEqual({ ok: true });
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
