// Wires one session's parts: the MCP server with its meta-tools and forwarding, the upstream registry with its
// policies and cache, the upstream clients' gate, and the streamable-HTTP transport.
import { Server, type ClientCapabilities, type McpHttpHandler } from "@modelcontextprotocol/server";
import type { CatalogChange, UpstreamCatalog } from "../catalog/catalog.ts";
import type { Subject } from "../config/subject.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import type { CatalogCache } from "../upstream/startup.ts";
import { PRODUCT, type Env } from "../lib/env.ts";
import { connectUpstream } from "./upstream-connect.ts";
import { settings } from "../lib/settings.ts";
import { HostBridge, modernHost } from "../relay/bridge.ts";
import { registerCompletion } from "../relay/completion.ts";
import { registerLogging } from "../relay/logging.ts";
import { registerPrompts } from "../relay/prompts.ts";
import type { ResourceLinks } from "../relay/resource-links.ts";
import { objectHandler } from "../modern/object-handler.ts";
import type { ParkedCalls } from "../modern/parked-calls.ts";
import { requestStateCodec } from "../modern/request-state.ts";
import { PAUSE_TTL_MS } from "../views/code/approval.ts";
import { registerResources, resubscribe } from "../relay/resources.ts";
import { registerRoots } from "../relay/roots.ts";
import type { CodeRuntime, CodeSessionParts } from "../views/code/code-context.ts";
import { codeView } from "../views/code/code-view.ts";
import { checkpointFinder } from "../views/code/instrument.ts";
import { CHILD_COMPATIBILITY_DATE } from "../views/code/child-modules.ts";
import { directView } from "../views/direct.ts";
import type { AuditRecorder, SessionAudit } from "../views/call-audit.ts";
import { metaView } from "../views/meta-view.ts";
import { sessionScope } from "../views/session-scope.ts";
import type { InputPort } from "../views/input-port.ts";
import { serveView, type ToolView, type ViewSession } from "../views/tool-view.ts";
import { elicitationInput } from "./elicitation-input.ts";
import { loadTokenCounter } from "../catalog/tokenizer.ts";
import { teamSearchEmbedder } from "../views/semantic-stage.ts";
import { bindingKv } from "../store/binding-kv.ts";
import { kvCatalogCache, type ToolsChanged } from "../store/catalog-cache.ts";
import { log } from "../lib/log.ts";
import { kvEraCache } from "../store/era-cache.ts";
import { canonicalJson, checkPins } from "../store/pins.ts";
import { UpstreamClient, relayedCapabilities } from "../upstream/client.ts";
import { DEFAULT_GATE_LIMITS, FetchGate } from "../upstream/fetch-gate.ts";
import { applyToolPolicy } from "../upstream/policy.ts";
import { handOnDigests } from "../catalog/catalog-digest.ts";
import { callerCatalog } from "../upstream/caller-catalog.ts";
import { toolAccess } from "../config/tool-access.ts";
import { UpstreamRegistry } from "../upstream/registry.ts";
import { principalOf, sessionView, type SessionRecord, type SessionStore } from "./state.ts";
import { SessionTransport } from "./transport.ts";
import type { UsageMeter } from "./usage.ts";

export interface Runtime {
  transport: SessionTransport;
  /** What every view of this runtime is built over (its `subject` is the object's: session-parts.ts). */
  session: ViewSession;
  registry: UpstreamRegistry;
  gate: FetchGate;
  /** Tells the host on its GET stream that its tool, resource and prompt lists may have changed (after a reload). */
  listsChanged: () => Promise<void>;
}

/**
 * What outlives one runtime in an object's life, shared by a runtime a reload retires and the one that replaces it:
 * the usage meter, the resources tool results linked to (one numbering, so neither overwrites the other's), and the
 * 2026-era calls parked for the host's input (a retry after the reload still finds the call it names).
 */
export interface ObjectParts {
  meter: UsageMeter;
  links: ResourceLinks;
  parks: ParkedCalls;
  /** Who the object's calls are made for, the latest a request brought (routed-request.ts takeSubject). */
  subject: Subject;
  /** The object's audit outbox: every call's entry is written there before its answer (src/session/audit-outbox.ts). */
  audit: AuditRecorder;
  /** Work the object finishes beside an answer (the semantic stage's durable vector writes). */
  waitUntil(work: Promise<unknown>): void;
}

/**
 * Everything the proxy can forward, advertised from the first initialize, whether or not an upstream that
 * brings it is loaded yet (a host that negotiates once still gets a lazy server's resources and prompts).
 */
export const PROXY_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
} as const;

/** The upstream side every era shares: the registry with its policies, cache and gate, over the given bridge. */
interface Upstreams {
  registry: UpstreamRegistry;
  gate: FetchGate;
  links: ResourceLinks | undefined;
}

/**
 * Builds the registry for a session record. The bridge needs the registry (an upstream's list change is read again
 * through it) and the registry the bridge (its hooks), so the bridge is made here from a function given the
 * registry's refresh.
 */
async function createUpstreams(
  env: Env,
  record: SessionRecord,
  store: SessionStore,
  objectLinks: ResourceLinks,
  subject: Subject,
  makeBridge: (refresh: (name: string) => Promise<CatalogChange>) => HostBridge,
  onConnect?: (registry: UpstreamRegistry, links: ResourceLinks | undefined, name: string, client: UpstreamClient) => Promise<void>,
): Promise<Upstreams & { bridge: HostBridge }> {
  const bridge = makeBridge((name) => registry.refresh(name));
  /** What the upstreams are told this object's host can do: their catalogs may depend on it. */
  const declared = () => relayedCapabilities(bridge.capabilities());
  const kv = bindingKv(env.TEAMS);
  // Each upstream's era (2025 or 2026-07-28), remembered so that connects after the first send no probe.
  const eras = kvEraCache(kv, record.team);
  const gate = new FetchGate({
    maxConnections: DEFAULT_GATE_LIMITS.maxConnections,
    maxResponseBytes: settings(env).maxUpstreamResponseBytes,
  });

  // The caller's policies, read at each decision: the subject is the object's, made the latest a request brought.
  const access = () => toolAccess(record.config, subject);
  /**
   * Filters (the team's, then the caller's policies), safe text, and (when the team pins) pinned definitions only; the
   * tools kept unchanged keep the digests their search index is found by (catalog-digest.ts).
   */
  const policy = async (spec: UpstreamSpec, catalog: UpstreamCatalog): Promise<UpstreamCatalog> => {
    const visible = callerCatalog(access(), record.config.mode, spec.name, applyToolPolicy(spec, catalog));
    if (!record.config.pinTools) return handOnDigests(catalog, visible);
    const pins = await checkPins(kv, record.team, spec.name, visible.tools);
    const notes = pins.withheld.map((name) => `tool ${name} withheld: its definition changed since it was pinned; an admin must approve it`);
    return handOnDigests(catalog, { ...visible, tools: pins.allowed, notes: [...visible.notes, ...notes] });
  };

  const connect = (spec: UpstreamSpec, signal?: AbortSignal) => connectUpstream(env, record, spec, { hooks: bridge, gate, eras }, signal);

  // Which upstream linked which resource in a tool result (config-file mode: single-MCP mode has one to ask).
  const links = record.config.mode === "multi" ? objectLinks : undefined;
  const registry: UpstreamRegistry = new UpstreamRegistry(record.config, store, {
    connect,
    policy,
    cache: perUserUncached(
      kvCatalogCache(kv, record.team, { capabilities: declared, toolsChanged: toldToTeam(env, record.team, declared), searchMode: record.config.mode }),
    ),
    onChange: (change) => void bridge.announce(change),
    hides: (server) => access().serverHidden(server, []),
    ...(onConnect ? { onConnect: (name: string, client: UpstreamClient) => onConnect(registry, links, name, client) } : {}),
  });
  await registry.restore();
  return { registry, gate, links, bridge };
}

/**
 * A per_user OAuth upstream's catalog is the member's own (it may differ per account): never shared through the cache,
 * and its changes are the member's alone (a 2026 list shows them once its object reads the upstream anew).
 */
function perUserUncached(cache: CatalogCache): CatalogCache {
  const shared = (spec: UpstreamSpec) => spec.auth?.mode !== "per_user";
  return {
    get: async (spec) => (shared(spec) ? cache.get(spec) : undefined),
    put: async (spec, catalog, readAt) => (shared(spec) ? cache.put(spec, catalog, readAt) : undefined),
    latest: async (spec) => (shared(spec) ? cache.latest(spec) : {}),
  };
}

/** The client capabilities the 2026 era declares upstream: its tools/list shows catalogs read with these. */
const MODERN_DECLARED = canonicalJson(relayedCapabilities(modernHost().capabilities()));

/**
 * An eager upstream's tools changed, as this object read them anew: the team's index announces it on the 2026 listen
 * streams, when the catalog is one the 2026 lists show (read with the capabilities that era declares: any 2026 object,
 * or a 2025 session whose host declared the same). Best-effort (the catalog is kept all the same), and not waited for.
 */
function toldToTeam(env: Env, team: string, declared: () => ClientCapabilities): ToolsChanged {
  return (server, digest) => {
    if (canonicalJson(declared()) !== MODERN_DECLARED) return;
    void env.TEAM_INDEX.getByName(team)
      .catalogChanged(server, digest)
      .catch((err: unknown) => log({ event: "unhandled", error: `listen streams of ${team} not told of ${server}'s tools: ${err instanceof Error ? err.message : String(err)}` }));
  };
}

/** What the session's calls are audited with: its outbox, view and era, the host's name, the team's settings. */
const sessionAudit = (record: SessionRecord, recorder: AuditRecorder, subject: Subject, era: SessionAudit["era"], client?: SessionAudit["client"]): SessionAudit => ({
  recorder,
  subject,
  view: sessionView(record),
  era,
  ...(client ? { client } : {}),
  ...(record.config.audit ? { settings: record.config.audit } : {}),
});

/** `tag`: a runtime built by a reload tags its requests to the host (SessionTransport), so their answers find it. */
export async function createRuntime(env: Env, record: SessionRecord, store: SessionStore, { meter, links: objectLinks, subject, audit, waitUntil }: ObjectParts, tag?: string): Promise<Runtime> {
  const server = new Server(
    { name: PRODUCT.name, version: PRODUCT.version },
    // The JSON Schema validator is the SDK's own choice for workerd (`@cfworker/json-schema`: no code generation).
    { capabilities: PROXY_CAPABILITIES },
  );
  // The resources' subscriptions are renewed on every new client.
  const subscriptions = new Set<string>();
  const { registry, gate, links, bridge } = await createUpstreams(
    env,
    record,
    store,
    objectLinks,
    subject,
    (refresh) => new HostBridge(server, record.config.mode, { subscriptions, refresh }),
    (registry, links, name, client) => resubscribe(registry, links, subscriptions, name, client),
  );
  const level = await store.logLevel();
  if (level) await registry.setLogLevel(level);

  const who = { team: record.team, session: record.sessionId.slice(0, 8), principal: principalOf(record) };
  const counter = () => loadTokenCounter(env.ASSETS);
  // Usage accounting (src/session/usage.ts): what the session can reach; a direct-view session is sent all of it.
  meter.attach({ tools: () => registry.tools(), counter, sentWhole: sessionView(record) === "direct" });
  const audited = sessionAudit(record, audit, subject, "2025", () => server.getClientVersion());
  const session: ViewSession = { registry, bridge, who, subject, links, meter, counter, audit: audited, semantic: teamSearchEmbedder(env, record.config.semantic, { team: record.team, defer: waitUntil }) };
  serveView(server, sessionToolView(env, record, store, session));
  registerResources(server, registry, bridge, subscriptions, links);
  registerPrompts(server, registry, bridge);
  registerCompletion(server, registry, bridge, links);
  registerLogging(server, registry, (l) => store.putLogLevel(l));
  registerRoots(server, registry);

  // The router has checked the body's size already; the SDK's own limit must not be the smaller one.
  const transport = new SessionTransport(record.sessionId, { get: () => store.transport(), set: (state) => store.putTransport(state) }, {
    maxRequestBodySize: settings(env).maxBodyBytes,
    tag,
  });
  await server.connect(transport);
  return { transport, session, registry, gate, listsChanged: () => bridge.announce({ tools: true, resources: true, prompts: true }) };
}

/**
 * The view the session started with, asking its host on the request's stream: the meta-tools (and promoted tools)
 * within the budget, every tool first-class, or code mode's three tools (a code session whose deployment has since
 * turned code mode off falls back to meta).
 */
function sessionToolView(env: Env, record: SessionRecord, store: SessionStore, session: ViewSession): ToolView {
  const input = elicitationInput(session.bridge);
  const view = sessionView(record);
  if (view === "direct") return directView(session, input);
  if (view === "code" && env.LOADER && settings(env).codeMode) return codeView(session, codeRuntime(env, env.LOADER), codeParts(store), input);
  return metaView(session, sessionScope(session), input);
}

/** Where and within what the code view runs programs: the loader, the checkpoint finder (a static asset), the limits. */
const codeRuntime = (env: Env, loader: WorkerLoader): CodeRuntime => ({
  loader,
  ...(settings(env).codeCheckpoints ? { checkpoints: checkpointFinder(loader, env.ASSETS, CHILD_COMPATIBILITY_DATE) } : {}),
  limits: settings(env).code,
});

/** Where a session's programs paused for consent wait (its storage). */
const codeParts = (store: SessionStore): CodeSessionParts => ({
  paused: { get: (id) => store.paused(id), delete: (id) => store.deletePaused(id), put: (id, run) => store.putPaused(id, run) },
});

/** A 2026-era object's parts: the registry, and the per-request handler over it. */
export interface ModernRuntime {
  handler: McpHttpHandler;
  /** What every view of this runtime is built over (its `subject` is the object's: session-parts.ts). */
  session: ViewSession;
  registry: UpstreamRegistry;
  gate: FetchGate;
}

/**
 * The runtime of a principal's or a toolset's object (2026 era): the same registry as a session's, and a handler
 * that builds a server per request. Nothing reaches the client outside a request (`modernHost`); an upstream's
 * request for input parks its call in the object's `parks` until the host's next round (src/modern/parked-calls.ts).
 */
export async function createModernRuntime(env: Env, record: SessionRecord, store: SessionStore, { meter, links: objectLinks, parks, subject, audit, waitUntil }: ObjectParts): Promise<ModernRuntime> {
  const { registry, gate, links, bridge } = await createUpstreams(env, record, store, objectLinks, subject, (refresh) =>
    new HostBridge(modernHost((extra, message) => parks.park(extra, message)), record.config.mode, { subscriptions: new Set(), refresh }),
  );
  const who = { team: record.team, session: record.sessionId.slice(0, 11), principal: principalOf(record) };
  const counter = () => loadTokenCounter(env.ASSETS);
  meter.attach({ tools: () => registry.tools(), counter, sentWhole: false });
  const semantic = teamSearchEmbedder(env, record.config.semantic, { team: record.team, defer: waitUntil });
  const session: ViewSession = { registry, bridge, who, subject, counter, links, meter, audit: sessionAudit(record, audit, subject, "2026"), semantic };
  // A view's own rounds (code mode's consent) live as long as the paused run they name (an hour), not as long as a park.
  let viewCodec: ReturnType<typeof requestStateCodec> | undefined;
  const rounds = {
    parks,
    codec: await requestStateCodec(env.SESSION_KEY ?? "", record),
    viewCodec: () => (viewCodec ??= requestStateCodec(env.SESSION_KEY ?? "", record, PAUSE_TTL_MS / 1000)),
  };
  // A principal's code object (the router sends `?view=code` there): the code view's three tools. A consent the team
  // asks for pauses the run (the era has no elicitation on a request's stream): a host whose request declares
  // elicitation is asked in an input_required round, whose answer resumes it; any other resumes it with `approve`.
  const loader = sessionView(record) === "code" && settings(env).codeMode ? env.LOADER : undefined;
  const code = loader ? (input: InputPort) => codeView(session, codeRuntime(env, loader), codeParts(store), input) : undefined;
  const handler = objectHandler({ ...session, links, rounds, handleLifetimeSeconds: settings(env).sessionTtlSeconds }, code);
  return { handler, session, registry, gate };
}
