// completion/complete, routed by its reference (a prompt name or a resource template) to the upstream that owns it.
// A resource reference goes where a resource with that URI would: the exact template first, then routeResource.
import type { Server } from "@modelcontextprotocol/server";
import { RpcError, forwardedError } from "../lib/errors.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { HostBridge } from "./bridge.ts";
import { hostSignal } from "./bridge.ts";
import { promptByExposedName, templateOwner } from "./merge.ts";
import type { ResourceLinks } from "./resource-links.ts";
import { routeResource } from "./resources.ts";

export function registerCompletion(server: Server, registry: UpstreamRegistry, bridge: HostBridge, links?: ResourceLinks): void {
  server.setRequestHandler("completion/complete", async (request, extra) => {
    await registry.ensureEager();
    const ready = registry.ready();
    const ref = request.params.ref;
    let owner: string | undefined;
    let params = request.params;
    if (ref.type === "ref/prompt") {
      const found = promptByExposedName(ready, registry.mode, ref.name);
      owner = found.owner;
      params = { ...params, ref: { ...ref, name: found.original } };
    } else {
      owner = templateOwner(ready, ref.uri) ?? (await routeResource(registry, links, ref.uri));
      if (!owner) throw new RpcError("invalid_params", `Unknown resource template: ${ref.uri}`);
    }
    const target = owner;
    try {
      return await bridge.during(target, extra, (origin) =>
        registry.withClient(target, async (client) => {
          if (!client.capabilities.completions) return { completion: { values: [], hasMore: false } };
          return client.request({ method: "completion/complete", params }, { signal: hostSignal(extra), origin });
        }, { signal: hostSignal(extra) }),
      );
    } catch (err) {
      throw forwardedError(err);
    }
  });
}
