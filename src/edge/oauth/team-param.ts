// The team an OAuth route serves, from its path: only with OAUTH_HOSTS=on (and the library's KV bound), only for a
// well-formed team name. Otherwise the route does not exist, and answers as the router's own 404 does.
import type { Context } from "hono";
import type { Env } from "../../lib/env.ts";
import { TeamName } from "../../config/schema.ts";
import { settings } from "../../lib/settings.ts";

export type OAuthContext = Context<{ Bindings: Env }>;

/** The team from the path when OAUTH_HOSTS is on and the name is a team name; else undefined (the route is absent). */
export function teamOf(c: OAuthContext): string | undefined {
  if (!settings(c.env).oauthHosts || !c.env.OAUTH_KV) return undefined;
  const parsed = TeamName.safeParse(c.req.param("team"));
  return parsed.success ? parsed.data : undefined;
}

export const absent = (c: OAuthContext): Response =>
  c.json({ error: "not_found", message: "No such route. The MCP endpoint is /t/<team>/mcp." }, 404);
