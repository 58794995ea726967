// prompts/list and prompts/get across upstreams: `server/prompt` in config-file mode, bare in single-MCP mode.
import type { Server } from "@modelcontextprotocol/server";
import { forwardedError } from "../lib/errors.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { HostBridge } from "./bridge.ts";
import { hostSignal } from "./bridge.ts";
import { mergePrompts, promptByExposedName } from "./merge.ts";
import { paginate } from "./paging.ts";

export function registerPrompts(server: Server, registry: UpstreamRegistry, bridge: HostBridge): void {
  server.setRequestHandler("prompts/list", async (request) => {
    await registry.ensureEager();
    const all = mergePrompts(registry.ready(), registry.mode).map((p) => p.exposed);
    const { page, nextCursor } = paginate(all, request.params?.cursor);
    return nextCursor ? { prompts: page, nextCursor } : { prompts: page };
  });

  server.setRequestHandler("prompts/get", async (request, extra) => {
    await registry.ensureEager();
    const found = promptByExposedName(registry.ready(), registry.mode, request.params.name);
    try {
      return await bridge.during(found.owner, extra, (origin) =>
        registry.withClient(found.owner, (client) =>
          client.request(
            { method: "prompts/get", params: { ...request.params, name: found.original } },
            { signal: hostSignal(extra), origin },
          ),
          { signal: hostSignal(extra) },
        ),
      );
    } catch (err) {
      throw forwardedError(err);
    }
  });
}
