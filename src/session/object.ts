// The session Durable Object: boots one MCP server per session, restores it after eviction, and ends it on DELETE.
import { DurableObject } from "cloudflare:workers";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { WorkerTransport } from "agents/mcp";
import { loadTeamConfig } from "../config/load.ts";
import { PRODUCT, ROUTE_HEADERS, type Env } from "../env.ts";
import { jsonRpcError } from "../http/responses.ts";
import { registerMetaTools } from "../meta/tools.ts";
import { UpstreamClient } from "../upstream/client.ts";
import { resolveHeaders } from "../upstream/headers.ts";
import { UpstreamRegistry } from "../upstream/registry.ts";
import { SessionStore, type SessionRecord } from "./state.ts";

interface Runtime {
  transport: WorkerTransport;
  registry: UpstreamRegistry;
}

export class SessionObject extends DurableObject<Env> {
  readonly #store = new SessionStore(this.ctx.storage);
  #runtime: Promise<Runtime> | undefined;

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
    return response;
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
    const registry = new UpstreamRegistry(record.config, this.#store, (spec) =>
      UpstreamClient.connect(spec, resolveHeaders(spec, () => undefined), {
        fetch: (input, init) => fetch(input, init),
        clientInfo: { name: PRODUCT.name, version: PRODUCT.version },
      }),
    );
    await registry.restore();
    const server = new Server(
      { name: PRODUCT.name, version: PRODUCT.version },
      { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    registerMetaTools(server, registry);
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
