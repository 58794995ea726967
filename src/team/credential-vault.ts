// The team's OAuth credentials for its upstreams (docs/oauth.md 3.3), kept in the team's index object: strongly
// consistent storage, one writer, so a rotating refresh token is redeemed once however many sessions ask.
//   `cred:<server>:<account>`   the credential, sealed (AES-GCM under SECRETS_KEY, bound to team, server, account)
// Sessions ask for an access token before each upstream request (cached in their memory until near expiry); the
// vault refreshes ahead of expiry, after the upstream's 401, and single-flights refreshes per account. The connects
// that bring a credential here, and the sign-ins they need, are src/team/connect-flows.ts.
import { log } from "../lib/log.ts";
import { openSecret, sealSecret, type SealedSecret } from "../lib/secrets.ts";
import { urlPolicy } from "../lib/url-policy.ts";
import type { Env, UpstreamCredential as CredentialShape } from "../lib/env.ts";
import type { Same } from "../store/kv.ts";
import {
  RefreshError,
  UpstreamCredential,
  credentialInfo,
  needsRefresh,
  refreshCredential,
  type CredentialInfo,
  type UpstreamTokenAnswer,
} from "../upstream/oauth-credential.ts";

/** The RPC's type (src/lib/env.ts, which imports nothing) is the schema's. */
const credentialMatches: Same<UpstreamCredential, CredentialShape> = true;
void credentialMatches;

const CRED = "cred:";
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
}

const answer = (c: UpstreamCredential): UpstreamTokenAnswer => ({ ok: true, token: c.accessToken, ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }) });

/** `cred:<server>:<account>` → [server, account] (server names have no ':'; accounts are "shared" or user ids). */
function splitKey(key: string): [string, string] {
  const rest = key.slice(CRED.length);
  const at = rest.indexOf(":");
  return [rest.slice(0, at), rest.slice(at + 1)];
}
