// prompts/list and prompts/get across upstreams: `server/prompt` in config-file mode, bare in single-MCP mode.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { GetPromptRequestSchema, GetPromptResultSchema, ListPromptsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { forwardedError } from "../errors.ts";
import type { UpstreamRegistry } from "../upstream/registry.ts";
import type { HostBridge } from "./bridge.ts";
import { mergePrompts, promptByExposedName } from "./merge.ts";
import { paginate } from "./paging.ts";

export function registerPrompts(server: Server, registry: UpstreamRegistry, bridge: HostBridge): void {
  server.setRequestHandler(ListPromptsRequestSchema, async (request) => {
    await registry.ensureEager();
    const all = mergePrompts(registry.ready(), registry.mode).map((p) => p.exposed);
    const { page, nextCursor } = paginate(all, request.params?.cursor);
    return nextCursor ? { prompts: page, nextCursor } : { prompts: page };
  });

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    await registry.ensureEager();
    const found = promptByExposedName(registry.ready(), registry.mode, request.params.name);
    try {
      return await bridge.during(found.owner, extra, () =>
        registry.withClient(found.owner, (client) =>
          client.request(
            { method: "prompts/get", params: { ...request.params, name: found.original } },
            GetPromptResultSchema,
            { signal: extra.signal },
          ),
          { signal: extra.signal },
        ),
      );
    } catch (err) {
      throw forwardedError(err);
    }
  });
}
