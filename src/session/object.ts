// The session Durable Object: boots one MCP server per session, restores it after eviction, and ends it on DELETE.
import { DurableObject } from "cloudflare:workers";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { WorkerTransport } from "agents/mcp";
import { loadTeamConfig } from "../config/load.ts";
import { PRODUCT, ROUTE_HEADERS, type Env } from "../env.ts";
import { HostBridge } from "../forward/bridge.ts";
import { registerCompletion } from "../forward/completion.ts";
import { registerLogging } from "../forward/logging.ts";
import { registerPrompts } from "../forward/prompts.ts";
import { registerResources } from "../forward/resources.ts";
import { registerRoots } from "../forward/roots.ts";
import { jsonRpcError } from "../http/responses.ts";
import { registerMetaTools } from "../meta/tools.ts";
import { UpstreamError } from "../errors.ts";
import { urlPolicy } from "../security/policy.ts";
import { checkUpstreamUrl } from "../security/url-guard.ts";
import { bindingKv } from "../teams/binding-kv.ts";
import { readSecret } from "../teams/store.ts";
import { checkPins } from "../teams/pins.ts";
import { UpstreamClient, type UpstreamCatalog } from "../upstream/client.ts";
import { DEFAULT_GATE_LIMITS, FetchGate } from "../upstream/fetch-gate.ts";
import { applyToolPolicy } from "../upstream/policy.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { resolveHeaders } from "../upstream/headers.ts";
import { UpstreamRegistry } from "../upstream/registry.ts";
import { SessionStore, type SessionRecord } from "./state.ts";

interface Runtime {
  transport: WorkerTransport;
  registry: UpstreamRegistry;
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

export class SessionObject extends DurableObject<Env> {
  readonly #store = new SessionStore(this.ctx.storage);
  #runtime: Promise<Runtime> | undefined;
  /** Host GET streams open right now: while there is one, upstreams keep their streams open too. */
  #hostStreams = 0;
  /** The upstream connection gate of the live runtime (its counters are what tests read). */
  gate: FetchGate | undefined;

  override async fetch(request: Request): Promise<Response> {
    const team = request.headers.get(ROUTE_HEADERS.team) ?? "";
    const tokenId = request.headers.get(ROUTE_HEADERS.tokenId) ?? "";
    const sessionId = request.headers.get(ROUTE_HEADERS.session) ?? "";
    const initialize = request.headers.get(ROUTE_HEADERS.initialize) === "1";

    let record = await this.#store.session();
    if (initialize && !record) {
      const config = await loadTeamConfig(this.env.TEAMS, team);
      if (!config?.ok) {
        const why = config ? "is not valid" : "does not exist";
        return jsonRpcError(503, -32603, `The team's config ${why}; an operator must store one with \`npm run team -- put\`.`);
      }
      record = { team, tokenId, sessionId, createdAt: new Date().toISOString(), config: config.config };
      await this.#store.putSession(record);
    } else if (!record || record.team !== team || record.tokenId !== tokenId || record.sessionId !== sessionId) {
      return jsonRpcError(404, -32001, "Session not found: start a new session with initialize.");
    }

    const runtime = await this.#boot(record);
    const response = await runtime.transport.handleRequest(request);
    if (initialize) {
      if (response.ok) {
        // Answer initialize at once; the first tools/list waits for these connections.
        this.ctx.waitUntil(runtime.registry.ensureEager());
      } else if (!(await this.#store.transport())?.initialized) {
        await this.#end();
      }
    }
    if (request.method === "DELETE" && response.ok) await this.#end();
    if (request.method === "GET" && response.ok && response.body) return this.#watchHostStream(response, runtime.registry);
    return response;
  }

  /** Counts the host's standalone stream while it lasts, and lets upstream streams follow it. */
  #watchHostStream(response: Response, registry: UpstreamRegistry): Response {
    const reader = response.body!.getReader();
    let open = true;
    const closed = () => {
      if (!open) return;
      open = false;
      if (--this.#hostStreams === 0) void registry.setStreaming(false);
    };
    if (this.#hostStreams++ === 0) void registry.setStreaming(true);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            closed();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          closed();
          controller.error(err);
        }
      },
      cancel(reason) {
        closed();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  /** Builds the server, registry and transport once per object life; a failed boot is retried next time. */
  #boot(record: SessionRecord): Promise<Runtime> {
    this.#runtime ??= this.#create(record).catch((err: unknown) => {
      this.#runtime = undefined;
      throw err;
    });
    return this.#runtime;
  }

  async #create(record: SessionRecord): Promise<Runtime> {
    const server = new Server(
      { name: PRODUCT.name, version: PRODUCT.version },
      { capabilities: PROXY_CAPABILITIES, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    const bridge = new HostBridge(server, record.config.mode);
    const kv = bindingKv(this.env.TEAMS);
    const gate = new FetchGate({
      maxConnections: DEFAULT_GATE_LIMITS.maxConnections,
      maxResponseBytes: Number(this.env.MAX_UPSTREAM_RESPONSE_BYTES) || DEFAULT_GATE_LIMITS.maxResponseBytes,
    });
    this.gate = gate;
    const addresses = urlPolicy(this.env);
    const policy = async (spec: UpstreamSpec, catalog: UpstreamCatalog): Promise<UpstreamCatalog> => {
      const visible = applyToolPolicy(spec, catalog);
      if (!record.config.pinTools) return visible;
      const pins = await checkPins(kv, record.team, spec.name, visible.tools);
      const notes = pins.withheld.map((name) => `tool ${name} withheld: its definition changed since it was pinned; an admin must approve it`);
      return { ...visible, tools: pins.allowed, notes: [...visible.notes, ...notes] };
    };
    const registry = new UpstreamRegistry(record.config, this.#store, async (spec) => {
      // Checked again before every connect: the policy of this deployment may be stricter than when it was written.
      const verdict = checkUpstreamUrl(spec.url, addresses);
      if (!verdict.ok) throw new UpstreamError(spec.name, { kind: "config", detail: verdict.reason });
      const headers = await resolveHeaders(spec, (name) => readSecret(kv, this.env.SECRETS_KEY, record.team, name));
      return UpstreamClient.connect(spec, headers, {
        fetch: (input, init) => fetch(input, init),
        clientInfo: { name: PRODUCT.name, version: PRODUCT.version },
        hooks: bridge,
        gate,
      });
    }, policy);
    bridge.attach(registry);
    await registry.restore();
    const level = await this.#store.logLevel();
    if (level) await registry.setLogLevel(level);
    registerMetaTools(server, registry, bridge, { team: record.team, session: record.sessionId.slice(0, 8) });
    registerResources(server, registry, bridge);
    registerPrompts(server, registry, bridge);
    registerCompletion(server, registry, bridge);
    registerLogging(server, registry, (l) => this.#store.putLogLevel(l));
    registerRoots(server, registry);
    const transport = new WorkerTransport({
      sessionIdGenerator: () => record.sessionId,
      storage: {
        get: () => this.#store.transport(),
        set: (state) => this.#store.putTransport(state),
      },
    });
    await server.connect(transport);
    return { transport, registry };
  }

  /** Ends the session: upstream sessions closed, storage wiped, so the id answers 404 from now on. */
  async #end(): Promise<void> {
    const runtime = await this.#runtime?.catch(() => undefined);
    this.#runtime = undefined;
    await runtime?.registry.closeAll();
    await this.#store.clear();
  }
}
