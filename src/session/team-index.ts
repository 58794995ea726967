// One per team: the ids of the team's live sessions, since Durable Objects cannot be listed, and the team's token
// usage per UTC day. Admin reloads and reconnects find the sessions here; a session is admitted at its start (each
// principal's bounded: src/session/live-sessions.ts) and removes itself when it ends. Sessions send their usage
// figures here (src/session/usage.ts); the admin API reads them.
// It also holds the team's 2026-era `subscriptions/listen` streams (src/modern/listen.ts), which the router sends here
// and the admin API's changes are announced on (`listsChanged`), and the OAuth secrets its token endpoint honoured in
// the last minutes (`spendOAuthSecret`: src/session/spent-secrets.ts).
import { DurableObject } from "cloudflare:workers";
import { logUnreadable } from "../config/keys.ts";
import {
  ROUTE_HEADERS,
  sessionObjectName,
  type Admission,
  type ConnectTransaction,
  type CredentialInfo,
  type Env,
  type ListsChanged,
  type MemberSignIn,
  type TeamIndexRpc,
  type UpstreamCredential,
  type UpstreamTokenAnswer,
  type UsageDay as UsageDayShape,
} from "../env.ts";
import { JsonRpcCode } from "../errors.ts";
import { TeamListen, type ListenLimits } from "../modern/listen.ts";
import { jsonRpcError } from "../responses.ts";
import { settings } from "../settings.ts";
import { accepted, type Same } from "../teams/kv.ts";
import { CredentialVault } from "./credential-vault.ts";
import { SpentSecrets } from "./spent-secrets.ts";
import { LiveSessions, PRINCIPAL } from "./live-sessions.ts";
import { principalOf } from "./state.ts";
import { USAGE_DAYS_KEPT, UsageDay, UsageFigures, addFigures, emptyFigures, firstDayOf } from "./usage.ts";

/** The RPC's types (src/env.ts, which imports nothing) are the schema's. */
const dayMatches: Same<UsageDay, UsageDayShape> = true;
void dayMatches;

/** `usage:<YYYY-MM-DD>`: the figures of one UTC day, at most USAGE_DAYS_KEPT of them. */
const USAGE_PREFIX = "usage:";
/** `usage-by:<YYYY-MM-DD>:<principal>`: one principal's share of a day (same window; sorted by day like the totals). */
const BY_PREFIX = "usage-by:";
/** Upstreams whose tools digest the index remembers at most (a config names far fewer). */
const MAX_SERVERS = 1000;

export class TeamIndex extends DurableObject<Env> implements TeamIndexRpc {
  /**
   * The team's listen streams: one handler per object life, made with the first stream (a change announced before
   * any stream opened has nobody to reach). Streams live in memory only: an eviction or a deploy ends them, and the
   * hosts listen again.
   */
  #listen: TeamListen | undefined;

  /** What one principal's listen streams may hold (the settings'; a test may shorten the lifetime before the first stream). */
  listenLimits: ListenLimits = { ...settings(this.env).listen };

  /**
   * Only the router's listen streams come in here (src/http/era.ts): a 2026-era request, routed to the index of the
   * team its token belongs to. Anything else, a request without the router's headers or one named for another team's
   * index, is not found.
   */
  override async fetch(request: Request): Promise<Response> {
    const team = request.headers.get(ROUTE_HEADERS.team);
    if (request.headers.get(ROUTE_HEADERS.era) !== "modern" || !team || !this.ctx.id.equals(this.env.TEAM_INDEX.idFromName(team))) {
      return jsonRpcError(404, JsonRpcCode.InvalidRequest, "Not found: a team's index serves only the router's subscriptions/listen streams.");
    }
    const tokenId = request.headers.get(ROUTE_HEADERS.tokenId) ?? "";
    const user = request.headers.get(ROUTE_HEADERS.user) ?? undefined;
    this.#listen ??= new TeamListen(this.listenLimits);
    return this.#listen.fetch(request, principalOf({ tokenId, ...(user ? { user } : {}) }));
  }

  async listsChanged(what: ListsChanged): Promise<void> {
    this.#listen?.publish(what);
  }

  /**
   * The last tools digest heard of each upstream, kept as long as the streams it serves (an eviction ends both):
   * objects that read the same change anew (a principal's after another's, or all at once) announce it once.
   */
  readonly #toolDigests = new Map<string, string>();

  async catalogChanged(server: string, digest: string): Promise<void> {
    if (this.#toolDigests.get(server) === digest) return;
    if (this.#toolDigests.size >= MAX_SERVERS) this.#toolDigests.clear();
    this.#toolDigests.set(server, digest);
    this.#listen?.publish({ tools: true });
  }

  /** The team's upstream OAuth credentials (src/session/credential-vault.ts). */
  #vault: CredentialVault | undefined;

  /** The vault, for this index's own team only: a caller naming another team is a bug, refused. */
  #vaultFor(team: string): CredentialVault {
    if (!this.ctx.id.equals(this.env.TEAM_INDEX.idFromName(team))) throw new Error("this team index holds another team's credentials");
    return (this.#vault ??= new CredentialVault(this.ctx.storage, this.env));
  }

  async putCredential(team: string, server: string, account: string, credential: UpstreamCredential): Promise<void> {
    await this.#vaultFor(team).put(team, server, account, credential);
  }

  async addCredential(team: string, server: string, account: string, credential: UpstreamCredential): Promise<boolean> {
    return this.#vaultFor(team).add(team, server, account, credential);
  }

  async spendConnectLink(team: string, nonce: string, expiresAt: number): Promise<"first" | "used" | "full"> {
    return this.#vaultFor(team).spendLink(nonce, expiresAt);
  }

  async upstreamToken(team: string, server: string, account: string, resource: string, stale?: string): Promise<UpstreamTokenAnswer> {
    return this.#vaultFor(team).token(team, server, account, resource, stale);
  }

  async listCredentials(team: string, server?: string): Promise<CredentialInfo[]> {
    return this.#vaultFor(team).list(team, server);
  }

  async deleteCredentials(team: string, filter: { server?: string; account?: string }): Promise<number> {
    return this.#vaultFor(team).delete(filter);
  }

  async beginConnect(team: string, state: string, transaction: ConnectTransaction): Promise<void> {
    await this.#vaultFor(team).beginConnect(state, transaction);
  }

  async takeConnect(team: string, state: string): Promise<ConnectTransaction | undefined> {
    return this.#vaultFor(team).takeConnect(state);
  }

  async beginMemberSignIn(team: string, state: string, signIn: MemberSignIn): Promise<void> {
    await this.#vaultFor(team).beginMemberSignIn(state, signIn);
  }

  async takeMemberSignIn(team: string, state: string): Promise<MemberSignIn | undefined> {
    return this.#vaultFor(team).takeMemberSignIn(state);
  }

  async spendOAuthSecret(team: string, hash: string): Promise<boolean> {
    if (!this.ctx.id.equals(this.env.TEAM_INDEX.idFromName(team))) throw new Error("this team index keeps another team's spent secrets");
    return new SpentSecrets(this.ctx.storage).spend(hash);
  }

  async listenStreams(): Promise<number> {
    return this.#listen?.open ?? 0;
  }

  readonly #sessions = new LiveSessions(this.ctx.storage);

  async admit(team: string, sessionId: string, principal: string, max: number): Promise<Admission> {
    if (!this.ctx.id.equals(this.env.TEAM_INDEX.idFromName(team))) throw new Error("this team index lists another team's sessions");
    return this.#sessions.admit(sessionId, principal, max, (other, evenListening) => this.env.SESSIONS.getByName(sessionObjectName(team, other)).endIfIdle(evenListening));
  }

  async seen(sessionId: string): Promise<void> {
    await this.#sessions.seen(sessionId);
  }

  async remove(sessionId: string): Promise<void> {
    await this.#sessions.remove(sessionId);
  }

  async list(): Promise<string[]> {
    return this.#sessions.list();
  }

  async addUsage(days: UsageDay[], principal?: string): Promise<void> {
    const now = Date.now();
    const first = firstDayOf(now, USAGE_DAYS_KEPT);
    // A day already out of the window, or a malformed entry, is not written.
    const fresh = days.flatMap((d) => {
      const parsed = UsageDay.safeParse(d);
      return parsed.success && parsed.data.day >= first ? [parsed.data] : [];
    });
    const by = typeof principal === "string" && PRINCIPAL.test(principal) ? principal : undefined;
    if (fresh.length > 0) {
      // Each day's team total, and the principal's share of it: one read and one write of all the keys.
      const keysOf = (day: string) => [USAGE_PREFIX + day, ...(by ? [`${BY_PREFIX}${day}:${by}`] : [])];
      const stored = await this.ctx.storage.get([...new Set(fresh.flatMap((d) => keysOf(d.day)))]);
      const next: Record<string, UsageFigures> = {};
      for (const { day, figures } of fresh) {
        for (const key of keysOf(day)) next[key] = addFigures(next[key] ?? this.#figures(key, stored.get(key)) ?? emptyFigures(), figures);
      }
      await this.ctx.storage.put(next);
    }
    // Days that have left the window go as new ones come.
    const old = [
      ...(await this.ctx.storage.list({ prefix: USAGE_PREFIX, end: USAGE_PREFIX + first })).keys(),
      ...(await this.ctx.storage.list({ prefix: BY_PREFIX, end: BY_PREFIX + first })).keys(),
    ];
    if (old.length > 0) await this.ctx.storage.delete(old);
  }

  async usageByPrincipal(days: number): Promise<Array<{ principal: string; figures: UsageFigures }>> {
    const window = Math.min(Math.max(Math.trunc(days) || 1, 1), USAGE_DAYS_KEPT);
    const rows = await this.ctx.storage.list({ prefix: BY_PREFIX, start: BY_PREFIX + firstDayOf(Date.now(), window) });
    const sums = new Map<string, UsageFigures>();
    for (const [key, value] of rows) {
      // `usage-by:YYYY-MM-DD:<principal>`: the principal is all after the day.
      const principal = key.slice(BY_PREFIX.length + 11);
      const figures = this.#figures(key, value);
      if (figures) sums.set(principal, addFigures(sums.get(principal) ?? emptyFigures(), figures));
    }
    return [...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([principal, figures]) => ({ principal, figures }));
  }

  async usage(days: number): Promise<UsageDay[]> {
    const window = Math.min(Math.max(Math.trunc(days) || 1, 1), USAGE_DAYS_KEPT);
    const rows = await this.ctx.storage.list({ prefix: USAGE_PREFIX, start: USAGE_PREFIX + firstDayOf(Date.now(), window) });
    return [...rows].flatMap(([key, value]) => {
      const figures = this.#figures(key, value);
      return figures ? [{ day: key.slice(USAGE_PREFIX.length), figures }] : [];
    });
  }

  /** A stored day's figures; unreadable ones are left out (and counted afresh from the next addition), logged once. */
  #figures(key: string, value: unknown): UsageFigures | undefined {
    if (value === undefined) return undefined;
    const figures = accepted(UsageFigures, value);
    if (!figures) logUnreadable("usage figures", key);
    return figures;
  }
}
