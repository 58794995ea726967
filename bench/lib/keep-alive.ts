// Long keep-alive for the benchmarks' Node servers (bench/floor/node-server.ts, the soak's upstream process):
// every server the process starts keeps idle connections for a minute, as hosted servers do.
import { Server } from "node:http";

/**
 * Node closes idle keep-alive connections after 5 s by default. Under load a client (here workerd) may reuse such a
 * connection just as Node closes it, and the request fails ("Network connection lost"). Hosted MCP servers sit
 * behind load balancers that keep connections for a minute or more, so the bench's servers do the same.
 */
export const KEEP_ALIVE_MS = 65_000;

/**
 * Gives every server this process starts from now on KEEP_ALIVE_MS when it starts listening (the replay fixture
 * does not take the option); `onListen`, when given, also sees each such server.
 */
export function longKeepAlive(onListen?: (server: Server) => void): void {
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    this.keepAliveTimeout = KEEP_ALIVE_MS;
    this.headersTimeout = KEEP_ALIVE_MS + 1000;
    onListen?.(this);
    return (listen as (...a: unknown[]) => Server).apply(this, args);
  } as typeof Server.prototype.listen;
}
