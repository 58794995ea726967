// Pure: the names the host calls an upstream's tools and prompts by. Config-file mode namespaces them as
// `server/name` (server names hold no `/`); single-MCP mode shows the upstream's own names.
import type { ConfigMode } from "../config/validate.ts";

/** The name the host sees for the upstream's own `name` on server `server`. */
export function exposedName(mode: ConfigMode, server: string, name: string): string {
  return mode === "single" ? name : `${server}/${name}`;
}

/** The server part of a namespaced name (before its first `/`); undefined for a name without a slash. */
export function serverPart(exposed: string): string | undefined {
  const slash = exposed.indexOf("/");
  return slash < 0 ? undefined : exposed.slice(0, slash);
}

/** The upstream's own name in a namespaced one (after its first `/`); a name without a slash is its own. */
export function bareName(exposed: string): string {
  return exposed.slice(exposed.indexOf("/") + 1);
}
