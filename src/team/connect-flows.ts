// The team's browser flows between their start and their callback, kept in its index object (one writer, strongly
// consistent, so a flow is taken once):
//   `connect:<state>`           an upstream's connect, until the authorization server's callback (ten minutes, used once)
//   `member-sign-in:<state>`    a connect link's sign-in at the team's identity provider (the same rules)
//   `dashboard-sign-in:<state>` a team admin's sign-in to the team's dashboard (the same rules; each its own account)
//   `link-used:<nonce>`         a shared account's connect link, spent at its first use, kept until it expires
// Unauthenticated routes start these, so each kind is bounded per account and per team.
import * as z from "zod";
import { ServerName } from "../config/schema.ts";
import type { ConnectTransaction as ConnectShape, DashboardSignIn as DashboardSignInShape, MemberSignIn as MemberSignInShape } from "../lib/env.ts";
import type { Same } from "../store/kv.ts";
import { ConnectTransaction } from "../upstream/oauth-credential.ts";

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

/** A team admin's dashboard sign-in between its start and the provider's callback (a PKCE verifier and nonce). */
export const DashboardSignIn = z.object({ verifier: z.string().max(128), nonce: z.string().max(128), expiresAt: z.number() });
export type DashboardSignIn = z.output<typeof DashboardSignIn>;

/** The RPC's types (src/lib/env.ts, which imports nothing) are the schemas'. */
const connectMatches: Same<ConnectTransaction, ConnectShape> = true;
const memberSignInMatches: Same<MemberSignIn, MemberSignInShape> = true;
void connectMatches;
const dashboardSignInMatches: Same<DashboardSignIn, DashboardSignInShape> = true;
void memberSignInMatches;
void dashboardSignInMatches;

const CONNECT = "connect:";
const MEMBER_SIGN_IN = "member-sign-in:";
const DASHBOARD_SIGN_IN = "dashboard-sign-in:";
const LINK_USED = "link-used:";
/** Flows kept at once per team and kind: a flood of started-and-abandoned ones cannot fill the object. */
export const MAX_PENDING = 500;
/**
 * Flows one account may have pending at once (a connect: per server). One more pushes out that account's oldest, so
 * a member (or anyone holding one link) starting flows by the hundred only ever replaces their own, never another's.
 */
export const MAX_PENDING_PER_ACCOUNT = 5;
/** What one storage delete takes at most. */
const DELETE_BATCH = 128;

export class ConnectFlows {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
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

  /** Who starts one is not known yet: each (by its random nonce) is its own account, and only the team's cap bounds them. */
  async beginDashboardSignIn(state: string, signIn: DashboardSignIn): Promise<void> {
    await this.#begin(DASHBOARD_SIGN_IN, state, DashboardSignIn.parse(signIn), (t) => t.nonce);
  }

  /** The dashboard sign-in this `state` started, once, within its ten minutes. */
  async takeDashboardSignIn(state: string): Promise<DashboardSignIn | undefined> {
    return this.#take<DashboardSignIn>(DASHBOARD_SIGN_IN, state);
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
    await this.#deleteAll(stale);
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
    await this.#deleteAll(gone);
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

  /** Storage deletes at most DELETE_BATCH keys a call. */
  async #deleteAll(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) await this.#storage.delete(keys.slice(i, i + DELETE_BATCH));
  }
}
