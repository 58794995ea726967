// The host's roots changed: every live upstream is told, and may ask roots/list again (relayed to the host).
import type { Server } from "@modelcontextprotocol/server";
import type { UpstreamRegistry } from "../upstream/registry.ts";

export function registerRoots(server: Server, registry: UpstreamRegistry): void {
  server.setNotificationHandler("notifications/roots/list_changed", async () => {
    await registry.notifyAll({ method: "notifications/roots/list_changed" });
  });
}
