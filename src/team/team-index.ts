// One per team, named `<team>`: a shell that checks each call is for its own team and hands it to the part with that
// job, each over the object's storage (keys: docs/storage.md):
//   the team's live sessions, since Durable Objects cannot be listed (src/team/live-sessions.ts): admitted at
//     their start, each principal's bounded, found by admin reloads and reconnects, removed when they end;
//   its usage ledger per UTC day, which sessions send figures to and the admin API reads (src/team/usage-ledger.ts);
//   its 2026-era `subscriptions/listen` streams, which the router sends here and list changes are announced on
//     (src/team/listen-streams.ts);
//   its upstream OAuth credentials (src/team/credential-vault.ts);
//   its connect and member sign-in flows, and shared connect links spent (src/team/connect-flows.ts);
//   the OAuth secrets its token endpoint honoured in the last minutes (src/team/spent-secrets.ts);
//   its audit trail, which sessions send entries to in batches and the admin API reads (src/team/audit-trail.ts).
import { DurableObject } from "cloudflare:workers";
import {
  ROUTE_HEADERS,
  sessionObjectName,
  type Admission,
  type AuditEntry,
  type AuditPage,
  type AuditQuery,
  type AuditServerFigures,
  type AuditSummary,
  type ConnectTransaction,
  type CredentialInfo,
  type Env,
  type ListsChanged,
  type DashboardSignIn,
  type MemberSignIn,
  type TeamIndexRpc,
  type UpstreamCredential,
  type UpstreamTokenAnswer,
  type UsageDay,
  type UsageFigures,
} from "../lib/env.ts";
import { JsonRpcCode } from "../lib/errors.ts";
import type { ListenLimits } from "../modern/listen.ts";
import { jsonRpcError } from "../lib/responses.ts";
import { settings } from "../lib/settings.ts";
import { AuditTrail } from "./audit-trail.ts";
import { ConnectFlows } from "./connect-flows.ts";
import { CredentialVault } from "./credential-vault.ts";
import { ListenStreams } from "./listen-streams.ts";
import { LiveSessions } from "./live-sessions.ts";
import { SpentSecrets } from "./spent-secrets.ts";
import { principalOf } from "../session/state.ts";
import { UsageLedger } from "./usage-ledger.ts";

export class TeamIndex extends DurableObject<Env> implements TeamIndexRpc {
  readonly #sessions = new LiveSessions(this.ctx.storage);
  readonly #ledger = new UsageLedger(this.ctx.storage);
  readonly #streams = new ListenStreams({ ...settings(this.env).listen });
  readonly #vault = new CredentialVault(this.ctx.storage, this.env);
  readonly #flows = new ConnectFlows(this.ctx.storage);
  readonly #spent = new SpentSecrets(this.ctx.storage);
  readonly #audit = new AuditTrail(this.ctx.storage);

  /** What one principal's listen streams may hold (the settings'; a test may shorten the lifetime before the first stream). */
  get listenLimits(): ListenLimits {
    return this.#streams.limits;
  }
  set listenLimits(limits: ListenLimits) {
    this.#streams.limits = limits;
  }

  /** True when `team` names this object: its own team. */
  #isOwn(team: string | null): boolean {
    return team !== null && team !== "" && this.ctx.id.equals(this.env.TEAM_INDEX.idFromName(team));
  }

  /** Refuses a call naming another team: a bug in the caller, never served from this team's records. */
  #own(team: string, holds: string): void {
    if (!this.#isOwn(team)) throw new Error(`this team index ${holds}`);
  }

  /**
   * Only the router's listen streams come in here (src/edge/mcp/era.ts): a 2026-era request, routed to the index of the
   * team its token belongs to. Anything else, a request without the router's headers or one named for another team's
   * index, is not found.
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get(ROUTE_HEADERS.era) !== "modern" || !this.#isOwn(request.headers.get(ROUTE_HEADERS.team))) {
      return jsonRpcError(404, JsonRpcCode.InvalidRequest, "Not found: a team's index serves only the router's subscriptions/listen streams.");
    }
    const tokenId = request.headers.get(ROUTE_HEADERS.tokenId) ?? "";
    const user = request.headers.get(ROUTE_HEADERS.user) ?? undefined;
    return this.#streams.fetch(request, principalOf({ tokenId, ...(user ? { user } : {}) }));
  }

  async listsChanged(what: ListsChanged): Promise<void> {
    this.#streams.publish(what);
  }

  async catalogChanged(server: string, digest: string): Promise<void> {
    this.#streams.catalogChanged(server, digest);
  }

  async listenStreams(): Promise<number> {
    return this.#streams.open;
  }

  async admit(team: string, sessionId: string, principal: string, max: number): Promise<Admission> {
    this.#own(team, "lists another team's sessions");
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
    await this.#ledger.add(days, principal);
  }

  async usage(days: number): Promise<UsageDay[]> {
    return this.#ledger.days(days);
  }

  async usageByPrincipal(days: number): Promise<Array<{ principal: string; figures: UsageFigures }>> {
    return this.#ledger.byPrincipal(days);
  }

  async putCredential(team: string, server: string, account: string, credential: UpstreamCredential): Promise<void> {
    this.#own(team, "holds another team's credentials");
    await this.#vault.put(team, server, account, credential);
  }

  async addCredential(team: string, server: string, account: string, credential: UpstreamCredential): Promise<boolean> {
    this.#own(team, "holds another team's credentials");
    return this.#vault.add(team, server, account, credential);
  }

  async upstreamToken(team: string, server: string, account: string, resource: string, stale?: string): Promise<UpstreamTokenAnswer> {
    this.#own(team, "holds another team's credentials");
    return this.#vault.token(team, server, account, resource, stale);
  }

  async listCredentials(team: string, server?: string): Promise<CredentialInfo[]> {
    this.#own(team, "holds another team's credentials");
    return this.#vault.list(team, server);
  }

  async deleteCredentials(team: string, filter: { server?: string; account?: string }): Promise<number> {
    this.#own(team, "holds another team's credentials");
    return this.#vault.delete(filter);
  }

  async spendConnectLink(team: string, nonce: string, expiresAt: number): Promise<"first" | "used" | "full"> {
    this.#own(team, "holds another team's connect links");
    return this.#flows.spendLink(nonce, expiresAt);
  }

  async beginConnect(team: string, state: string, transaction: ConnectTransaction): Promise<void> {
    this.#own(team, "holds another team's connects");
    await this.#flows.beginConnect(state, transaction);
  }

  async takeConnect(team: string, state: string): Promise<ConnectTransaction | undefined> {
    this.#own(team, "holds another team's connects");
    return this.#flows.takeConnect(state);
  }

  async beginMemberSignIn(team: string, state: string, signIn: MemberSignIn): Promise<void> {
    this.#own(team, "holds another team's sign-ins");
    await this.#flows.beginMemberSignIn(state, signIn);
  }

  async takeMemberSignIn(team: string, state: string): Promise<MemberSignIn | undefined> {
    this.#own(team, "holds another team's sign-ins");
    return this.#flows.takeMemberSignIn(state);
  }

  async beginDashboardSignIn(team: string, state: string, signIn: DashboardSignIn): Promise<void> {
    this.#own(team, "holds another team's sign-ins");
    await this.#flows.beginDashboardSignIn(state, signIn);
  }

  async takeDashboardSignIn(team: string, state: string): Promise<DashboardSignIn | undefined> {
    this.#own(team, "holds another team's sign-ins");
    return this.#flows.takeDashboardSignIn(state);
  }

  async spendOAuthSecret(team: string, hash: string): Promise<boolean> {
    this.#own(team, "keeps another team's spent secrets");
    return this.#spent.spend(hash);
  }

  async appendAudit(team: string, entries: AuditEntry[], days?: number): Promise<number> {
    this.#own(team, "keeps another team's audit trail");
    return this.#audit.append(entries, days);
  }

  async readAudit(team: string, query: AuditQuery): Promise<AuditPage> {
    this.#own(team, "keeps another team's audit trail");
    return this.#audit.read(query);
  }

  async auditSummary(team: string, since: number, top: number): Promise<AuditSummary> {
    this.#own(team, "keeps another team's audit trail");
    return this.#audit.summary(since, top);
  }

  async auditServers(team: string, since: number): Promise<AuditServerFigures[]> {
    this.#own(team, "keeps another team's audit trail");
    return this.#audit.servers(since);
  }
}
