// resources/list, resources/templates/list, resources/read, resources/subscribe and /unsubscribe across upstreams.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  EmptyResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { RpcError, forwardedError } from "../errors.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { HostBridge } from "./bridge.ts";
import { mergeResources, mergeTemplates, resourceOwner } from "./merge.ts";
import { paginate } from "./paging.ts";

/** The code the MCP spec gives an unknown resource. */
export const RESOURCE_NOT_FOUND = -32002;

export function registerResources(server: Server, registry: UpstreamRegistry, bridge: HostBridge): void {
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    await registry.ensureEager();
    const { page, nextCursor } = paginate(mergeResources(registry.ready()).map((r) => r.resource), request.params?.cursor);
    return nextCursor ? { resources: page, nextCursor } : { resources: page };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request) => {
    await registry.ensureEager();
    const all = mergeTemplates(registry.ready()).map((t) => t.template);
    const { page, nextCursor } = paginate(all, request.params?.cursor);
    return nextCursor ? { resourceTemplates: page, nextCursor } : { resourceTemplates: page };
  });

  const owner = async (uri: string): Promise<string> => {
    await registry.ensureEager();
    const name = resourceOwner(registry.ready(), uri);
    if (!name) throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri} (no loaded server lists it or has a template that matches it).`);
    return name;
  };

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const name = await owner(request.params.uri);
    try {
      return await bridge.during(name, extra, () =>
        registry.withClient(name, (client) =>
          client.request({ method: "resources/read", params: request.params }, ReadResourceResultSchema, { signal: extra.signal }),
          { signal: extra.signal },
        ),
      );
    } catch (err) {
      throw forwardedError(err);
    }
  });

  const subscription = (method: "resources/subscribe" | "resources/unsubscribe") => async (request: { params: { uri: string } }, extra: { signal: AbortSignal }) => {
    const uri = request.params.uri;
    const name = await owner(uri);
    try {
      await registry.withClient(name, async (client) => {
        if (!client.capabilities.resources?.subscribe) {
          throw new RpcError(-32601, `The server "${name}" that owns ${uri} does not support resource subscriptions.`);
        }
        await client.request({ method, params: { uri } }, EmptyResultSchema, { signal: extra.signal });
      }, { signal: extra.signal });
    } catch (err) {
      throw forwardedError(err);
    }
    if (method === "resources/subscribe") bridge.subscriptions.add(uri);
    else bridge.subscriptions.delete(uri);
    return {};
  };
  server.setRequestHandler(SubscribeRequestSchema, subscription("resources/subscribe"));
  server.setRequestHandler(UnsubscribeRequestSchema, subscription("resources/unsubscribe"));

  // A reconnected upstream has forgotten the host's subscriptions: renew the ones it owns.
  registry.onConnect = async (name, client) => {
    if (!client.capabilities.resources?.subscribe) return;
    const ready = registry.ready();
    for (const uri of bridge.subscriptions) {
      if (resourceOwner(ready, uri) === name) {
        await client.request({ method: "resources/subscribe", params: { uri } }, EmptyResultSchema).catch(() => {});
      }
    }
  };
}
