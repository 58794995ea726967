// The team's OAuth credentials for its upstreams (docs/oauth.md 3.3), kept in the team's index object:
// strongly consistent storage, one writer, so a rotating refresh token is redeemed once however many sessions ask.
//   `cred:<server>:<account>`   the credential, sealed (AES-GCM under SECRETS_KEY, bound to team, server, account)
//   `connect:<state>`           a connect between its start and the callback (ten minutes, used once)
//   `member-sign-in:<state>`    a connect link's sign-in at the team's identity provider (the same rules)
//   `link-used:<nonce>`         a shared account's connect link, spent at its first use, kept until it expires
// Sessions ask for an access token before each upstream request (cached in their memory until near expiry); the
// vault refreshes ahead of expiry, after the upstream's 401, and single-flights refreshes per account.
import * as z from "zod";
import { log } from "../log.ts";
import { ServerName } from "../config/schema.ts";
import { openSecret, sealSecret, type SealedSecret } from "../security/secrets.ts";
import { urlPolicy } from "../security/policy.ts";
import type { ConnectTransaction as ConnectShape, Env, MemberSignIn as MemberSignInShape, UpstreamCredential as CredentialShape } from "../env.ts";
import type { Same } from "../teams/kv.ts";
import {
  ConnectTransaction,
  RefreshError,
  UpstreamCredential,
  credentialInfo,
  needsRefresh,
  refreshCredential,
  type CredentialInfo,
  type UpstreamTokenAnswer,
} from "../upstream/oauth-credential.ts";

/** The RPC's types (src/env.ts, which imports nothing) are the schemas'. */
const credentialMatches: Same<UpstreamCredential, CredentialShape> = true;
const connectMatches: Same<ConnectTransaction, ConnectShape> = true;
void credentialMatches;
void connectMatches;

/**
 * A connect link's member sign-in between its start and the identity provider's callback (no secret in it). Each
 * field is as small as what the route puts there (a PKCE verifier and nonce, a server name, a connect handle and its
 * account's tag): an unauthenticated route starts these, so nothing larger may be kept.
 */
export const MemberSignIn = z.object({
  verifier: z.string().max(128),
  nonce: z.string().max(128),
  server: ServerName,
  handle: z.string().max(128),
  accountTag: z.string().max(64),
  expiresAt: z.number(),
});
export type MemberSignIn = z.output<typeof MemberSignIn>;
const memberSignInMatches: Same<MemberSignIn, MemberSignInShape> = true;
void memberSignInMatches;

const CRED = "cred:";
const CONNECT = "connect:";
const MEMBER_SIGN_IN = "member-sign-in:";
const LINK_USED = "link-used:";
/** Flows kept at once per team and kind: a flood of started-and-abandoned ones cannot fill the object. */
const MAX_PENDING = 500;
/**
 * Flows one account may have pending at once (a connect: per server). One more pushes out that account's oldest, so
 * a member (or anyone holding one link) starting flows by the hundred only ever replaces their own, never another's.
 */
const MAX_PENDING_PER_ACCOUNT = 5;

/** The sealed record's name: contains ':' so it can never be a team secret's name (those are identifiers). */
const sealName = (server: string, account: string) => `oauth:${server}:${account}`;
const credKey = (server: string, account: string) => `${CRED}${server}:${account}`;

export class CredentialVault {
  readonly #storage: DurableObjectStorage;
  readonly #env: Env;
  /** Refreshes in flight, by credential key: a second asker waits for the first's answer. */
  readonly #refreshing = new Map<string, Promise<UpstreamTokenAnswer>>();
  /** The last `add` in line. */
  #adding: Promise<unknown> = Promise.resolve();

  constructor(storage: DurableObjectStorage, env: Env) {
    this.#storage = storage;
    this.#env = env;
  }

  #material(): string {
    const key = this.#env.SECRETS_KEY;
    if (!key) throw new Error("SECRETS_KEY is not set: upstream OAuth credentials cannot be stored without it");
    return key;
  }

  async put(team: string, server: string, account: string, credential: UpstreamCredential): Promise<void> {
    const parsed = UpstreamCredential.parse(credential);
    const sealed = await sealSecret(this.#material(), team, sealName(server, account), JSON.stringify(parsed));
    await this.#storage.put(credKey(server, account), sealed);
  }

  /**
   * Stores a newly connected credential unless the account is already connected to this resource (the entry's URL):
   * false then, and the stored one kept. Only an explicit disconnect (`delete`) makes room; a credential that can no
   * longer be used (another resource, unreadable) is replaced.
   */
  add(team: string, server: string, account: string, credential: UpstreamCredential): Promise<boolean> {
    // One add at a time: each sees what the one before it stored, whatever the sealing between read and write awaits.
    const turn = this.#adding.then(async () => {
      const stored = await this.#read(team, server, account);
      if (stored?.resource === credential.resource) return false;
      await this.put(team, server, account, credential);
      return true;
    });
    this.#adding = turn.catch(() => undefined);
    return turn;
  }

  async #read(team: string, server: string, account: string): Promise<UpstreamCredential | undefined> {
    const sealed = await this.#storage.get<SealedSecret>(credKey(server, account));
    if (sealed === undefined || !this.#env.SECRETS_KEY) return undefined;
    const text = await openSecret(this.#env.SECRETS_KEY, team, sealName(server, account), sealed).catch(() => undefined);
    if (text === undefined) return undefined;
    const parsed = UpstreamCredential.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  }

  /**
   * An access token for `account` at `server`, for the entry's URL `resource`. Refreshed first when it expires within
   * a minute, or when the caller's token `stale` was refused by the upstream (a 401) and is still the stored one. A
   * credential for another resource (the entry's URL changed) is not used.
   */
  async token(team: string, server: string, account: string, resource: string, stale?: string): Promise<UpstreamTokenAnswer> {
    const key = credKey(server, account);
    const running = this.#refreshing.get(key);
    if (running) return running;
    const credential = await this.#read(team, server, account);
    if (!credential) return { ok: false, reason: "not_connected", detail: `no ${account === "shared" ? "shared" : "personal"} account is connected to ${server}` };
    if (credential.resource !== resource) {
      return { ok: false, reason: "resource_changed", detail: `the account was connected for another URL of ${server}: connect it again` };
    }
    const refused = stale !== undefined && stale === credential.accessToken;
    if (!refused && !needsRefresh(credential)) return answer(credential);
    if (credential.refreshToken === undefined) {
      if (!refused) return answer(credential);
      await this.#storage.delete(key);
      return { ok: false, reason: "refresh_failed", detail: `${server} refused the account's token and gave no way to refresh it: connect it again` };
    }
    const refresh = this.#refresh(team, server, account, credential).finally(() => this.#refreshing.delete(key));
    this.#refreshing.set(key, refresh);
    return refresh;
  }

  async #refresh(team: string, server: string, account: string, credential: UpstreamCredential): Promise<UpstreamTokenAnswer> {
    try {
      const fresh = await refreshCredential(credential, urlPolicy(this.#env));
      await this.put(team, server, account, fresh);
      return answer(fresh);
    } catch (err) {
      const reason = err instanceof Error ? err.message : "unknown error";
      log({ event: "upstream_oauth", team, upstream: server, action: "refresh", outcome: "failed", reason });
      if (err instanceof RefreshError && err.revoked) {
        await this.#storage.delete(credKey(server, account));
        return { ok: false, reason: "refresh_failed", detail: `${server} no longer accepts the account (${reason}): connect it again` };
      }
      return { ok: false, reason: "refresh_failed", detail: `the account's token for ${server} could not be refreshed: ${reason}` };
    }
  }

  /** What may be shown of the team's credentials (one server's, or all): no token, no secret. */
  async list(team: string, server?: string): Promise<CredentialInfo[]> {
    const rows = await this.#storage.list({ prefix: server === undefined ? CRED : `${CRED}${server}:` });
    const out: CredentialInfo[] = [];
    for (const key of rows.keys()) {
      const [name = "", account = ""] = splitKey(key);
      const credential = await this.#read(team, name, account);
      if (credential) out.push(credentialInfo(name, account, credential));
    }
    return out;
  }

  /** Deletes credentials: one server's, one account's everywhere, or one of both; answers how many went. */
  async delete(filter: { server?: string; account?: string }): Promise<number> {
    const rows = await this.#storage.list({ prefix: filter.server === undefined ? CRED : `${CRED}${filter.server}:` });
    const keys = [...rows.keys()].filter((key) => filter.account === undefined || splitKey(key)[1] === filter.account);
    if (keys.length > 0) await this.#storage.delete(keys);
    return keys.length;
  }

  async beginConnect(state: string, transaction: ConnectTransaction): Promise<void> {
    await this.#begin(CONNECT, state, ConnectTransaction.parse(transaction), (t) => `${t.server}\n${t.account}`);
  }

  /** The connect this `state` started, once: a second use, or one after ten minutes, finds nothing. */
  async takeConnect(state: string): Promise<ConnectTransaction | undefined> {
    return this.#take<ConnectTransaction>(CONNECT, state);
  }

  async beginMemberSignIn(state: string, signIn: MemberSignIn): Promise<void> {
    await this.#begin(MEMBER_SIGN_IN, state, MemberSignIn.parse(signIn), (t) => t.accountTag);
  }

  /** The member sign-in this `state` started, once, within its ten minutes. */
  async takeMemberSignIn(state: string): Promise<MemberSignIn | undefined> {
    return this.#take<MemberSignIn>(MEMBER_SIGN_IN, state);
  }

  /**
   * Spends a connect link's nonce: "first" at its first use (kept until `expiresAt`, when the link stops working
   * anyway), "used" after. Only links whose MAC checked reach here; past MAX_PENDING unexpired ones, "full" (nothing
   * is forgotten early, which would let a link work twice).
   */
  async spendLink(nonce: string, expiresAt: number): Promise<"first" | "used" | "full"> {
    const key = LINK_USED + nonce;
    if ((await this.#storage.get(key)) !== undefined) return "used";
    const all = await this.#storage.list<{ expiresAt: number }>({ prefix: LINK_USED });
    const now = Date.now();
    const stale = [...all].filter(([, v]) => v.expiresAt <= now).map(([k]) => k);
    // Storage deletes at most 128 keys a call.
    for (let i = 0; i < stale.length; i += 128) await this.#storage.delete(stale.slice(i, i + 128));
    if (all.size - stale.length >= MAX_PENDING) return "full";
    await this.#storage.put(key, { expiresAt });
    return "first";
  }

  /**
   * Keeps a flow under `prefix + state`. Expired ones go first; then, past its account's cap, that account's oldest
   * (`account` names whose a flow is); then, past the team's cap, the oldest of all.
   */
  async #begin<T extends { expiresAt: number }>(prefix: string, state: string, value: T, account: (flow: T) => string): Promise<void> {
    const now = Date.now();
    const all = [...(await this.#storage.list<T>({ prefix }))];
    const gone = all.filter(([, t]) => t.expiresAt <= now).map(([k]) => k);
    const live = all.filter(([, t]) => t.expiresAt > now).sort(([, a], [, b]) => a.expiresAt - b.expiresAt);
    const whose = account(value);
    const own = live.filter(([, t]) => account(t) === whose);
    const pushedOut = own.slice(0, Math.max(0, own.length - MAX_PENDING_PER_ACCOUNT + 1)).map(([k]) => k);
    const rest = live.filter(([k]) => !pushedOut.includes(k));
    gone.push(...pushedOut, ...rest.slice(0, Math.max(0, rest.length - MAX_PENDING + 1)).map(([k]) => k));
    // Storage deletes at most 128 keys a call.
    for (let i = 0; i < gone.length; i += 128) await this.#storage.delete(gone.slice(i, i + 128));
    await this.#storage.put(prefix + state, value);
  }

  /** A flow's value, deleted as it is read; undefined when absent or expired. */
  async #take<T extends { expiresAt: number }>(prefix: string, state: string): Promise<T | undefined> {
    const key = prefix + state;
    const value = await this.#storage.get<T>(key);
    if (value === undefined) return undefined;
    await this.#storage.delete(key);
    return value.expiresAt > Date.now() ? value : undefined;
  }
}

const answer = (c: UpstreamCredential): UpstreamTokenAnswer => ({ ok: true, token: c.accessToken, ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }) });

/** `cred:<server>:<account>` → [server, account] (server names have no ':'; accounts are "shared" or user ids). */
function splitKey(key: string): [string, string] {
  const rest = key.slice(CRED.length);
  const at = rest.indexOf(":");
  return [rest.slice(0, at), rest.slice(at + 1)];
}
