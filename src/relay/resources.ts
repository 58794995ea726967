// resources/list, resources/templates/list, resources/read, resources/subscribe and /unsubscribe across upstreams.
import type { Server } from "@modelcontextprotocol/server";
import { RpcError, forwardedError } from "../lib/errors.ts";
import type { UpstreamClient } from "../upstream/client.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { HostBridge, HostExtra } from "./bridge.ts";
import { hostSignal } from "./bridge.ts";
import { mergeResources, mergeTemplates, resourceOwner, resourceServers, unclaimedResourceOwner } from "./merge.ts";
import { paginate } from "./paging.ts";
import type { ResourceLinks } from "./resource-links.ts";

/**
 * The upstream a URI goes to, over the loaded upstreams as they are now (the caller has waited for the eager ones):
 * the one that lists it, else the first whose template matches it, else, for a URI nobody claims, the one
 * unclaimedResourceOwner picks (single-MCP mode: the upstream; config-file mode: the one whose tool result linked
 * it, else the only one with resources). Undefined when none is left.
 */
export async function routeResource(registry: UpstreamRegistry, links: ResourceLinks | undefined, uri: string): Promise<string | undefined> {
  const claimed = resourceOwner(registry.ready(), uri);
  if (claimed) return claimed;
  const linkedBy = registry.mode === "multi" ? await links?.linkedBy(uri) : undefined;
  return unclaimedResourceOwner(registry.ready(), registry.mode, linkedBy);
}

/** Why a URI has no upstream, naming the loaded servers that offer resources (names only, never their URLs). */
function notFound(registry: UpstreamRegistry, uri: string): RpcError {
  const serving = resourceServers(registry.ready()).map((u) => `"${u.name}"`);
  const why =
    serving.length === 0
      ? "no loaded server offers resources"
      : `no loaded server lists it, has a template that matches it or linked it in a tool result, and more than one offers resources (${serving.join(", ")})`;
  return new RpcError("resource_not_found", `Resource not found: ${uri} (${why}).`);
}

/**
 * A reconnected upstream has forgotten the host's subscriptions: renews the ones routed to it, by the same rule as
 * the subscribe itself (not waiting for the eager upstreams: this runs while one of them connects). The registry
 * runs it on every new client (its `onConnect`).
 */
export async function resubscribe(
  registry: UpstreamRegistry,
  links: ResourceLinks | undefined,
  subscriptions: ReadonlySet<string>,
  name: string,
  client: UpstreamClient,
): Promise<void> {
  if (!client.capabilities.resources?.subscribe) return;
  for (const uri of [...subscriptions]) {
    if ((await routeResource(registry, links, uri).catch(() => undefined)) === name) {
      await client.request({ method: "resources/subscribe", params: { uri } }).catch(() => {});
    }
  }
}

/** The resources handlers; `subscriptions` is the session's set of subscribed URIs, kept here. */
export function registerResources(
  server: Server,
  registry: UpstreamRegistry,
  bridge: HostBridge,
  subscriptions: Set<string>,
  links?: ResourceLinks,
  /** False for the 2026 era, which has no resources/subscribe (subscriptions/listen replaces it). */
  subscribe = true,
): void {
  server.setRequestHandler("resources/list", async (request) => {
    await registry.ensureEager();
    const { page, nextCursor } = paginate(mergeResources(registry.ready()).map((r) => r.resource), request.params?.cursor);
    return nextCursor ? { resources: page, nextCursor } : { resources: page };
  });

  server.setRequestHandler("resources/templates/list", async (request) => {
    await registry.ensureEager();
    const all = mergeTemplates(registry.ready()).map((t) => t.template);
    const { page, nextCursor } = paginate(all, request.params?.cursor);
    return nextCursor ? { resourceTemplates: page, nextCursor } : { resourceTemplates: page };
  });

  const owner = async (uri: string): Promise<string> => {
    await registry.ensureEager();
    const name = await routeResource(registry, links, uri);
    if (!name) throw notFound(registry, uri);
    return name;
  };

  server.setRequestHandler("resources/read", async (request, extra) => {
    const name = await owner(request.params.uri);
    try {
      return await bridge.during(name, extra, (origin) =>
        registry.withClient(name, (client) =>
          client.request({ method: "resources/read", params: request.params }, { signal: hostSignal(extra), origin }),
          { signal: hostSignal(extra) },
        ),
      );
    } catch (err) {
      throw forwardedError(err);
    }
  });

  const subscription = (method: "resources/subscribe" | "resources/unsubscribe") => async (request: { params: { uri: string } }, extra: HostExtra) => {
    const uri = request.params.uri;
    const name = await owner(uri);
    try {
      await registry.withClient(name, async (client) => {
        if (!client.capabilities.resources?.subscribe) {
          throw new RpcError("not_supported", `The server "${name}" that owns ${uri} does not support resource subscriptions.`);
        }
        await client.request({ method, params: { uri } }, { signal: hostSignal(extra) });
      }, { signal: hostSignal(extra) });
    } catch (err) {
      throw forwardedError(err);
    }
    if (method === "resources/subscribe") subscriptions.add(uri);
    else subscriptions.delete(uri);
    return {};
  };
  if (!subscribe) return;
  server.setRequestHandler("resources/subscribe", subscription("resources/subscribe"));
  server.setRequestHandler("resources/unsubscribe", subscription("resources/unsubscribe"));

}
