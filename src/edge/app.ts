// The Hono routes: the MCP endpoint, health and the published config schema.
import { Hono } from "hono";
import type { Env } from "../lib/env.ts";
import { configJsonSchema } from "../config/json-schema.ts";
import { admin } from "./admin/routes.ts";
import { dashboard } from "./dashboard/dashboard-routes.tsx";
import { teamAdminDashboard } from "./dashboard/team-admin-routes.tsx";
import { log } from "../lib/log.ts";
import { mcp } from "./mcp/mcp-route.ts";
import { oauth } from "./oauth/routes.ts";

export const app = new Hono<{ Bindings: Env }>();

app.get("/health", (c) => c.json({ ok: true }));
// Generated once per isolate: the schema is fixed at build time.
let configSchema: Record<string, unknown> | undefined;
app.get("/config.schema.json", (c) => c.json((configSchema ??= configJsonSchema())));
// /t/<team>/mcp: the MCP route's chain of steps (mcp-route.ts).
app.route("/", mcp);
// OAuth (docs/oauth.md): metadata, token, registration of each team's authorization server; only with OAUTH_HOSTS=on.
app.route("/", oauth);
app.route("/admin", admin);
// The operator's dashboard (docs/dashboard.md): server-rendered pages behind an ADMIN_TOKEN sign-in.
app.route("/dashboard", dashboard);
// A team's pages for its own admins at /t/<team>/dashboard, signed in through the team's identity provider; after the
// OAuth routes, whose callback hands a dashboard sign-in's state on to it.
app.route("/", teamAdminDashboard);
app.notFound((c) => c.json({ error: "not_found", message: "No such route. The MCP endpoint is /t/<team>/mcp." }, 404));
app.onError((err, c) => {
  // The host went away (its request's signal aborted, e.g. a client closing its GET stream): nothing failed, and
  // nobody reads the answer. Not an error line.
  if (c.req.raw.signal.aborted) return new Response(null, { status: 499 });
  log({ event: "unhandled", error: err instanceof Error ? err.name : "unknown" });
  return c.json({ error: "internal", message: "The proxy failed to handle this request." }, 500);
});
