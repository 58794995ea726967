// logging/setLevel: remembered by the session and applied to every upstream, including those loaded later.
import type { Server } from "@modelcontextprotocol/server";
import type { LoggingLevel } from "@modelcontextprotocol/server";
import type { UpstreamRegistry } from "../upstream/registry.ts";

export function registerLogging(server: Server, registry: UpstreamRegistry, remember: (level: LoggingLevel) => Promise<void>): void {
  server.setRequestHandler("logging/setLevel", async (request) => {
    await remember(request.params.level);
    await registry.setLogLevel(request.params.level);
    return {};
  });
}
