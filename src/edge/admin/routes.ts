// The admin API under /admin: team configs, tokens, secrets, pins, usage, the audit trail, signed-in users with their
// grants, and accounts at OAuth upstreams, behind the ADMIN_TOKEN Worker secret. Each resource group is its own router
// (config, token, pin, session, usage, audit, user and account routes), mounted here behind the admin token; the
// OpenAPI document of them all is public, served from the Worker's assets (scripts/build-openapi.ts writes it from
// the routes' zod schemas at set-up, so its generator is not in the bundle).
import { Hono } from "hono";
import { accountRoutes } from "./account-routes.ts";
import { auditRoutes } from "./audit-routes.ts";
import { adminAuth } from "./auth.ts";
import { configRoutes } from "./config-routes.ts";
import { assetBytes } from "../../lib/asset-bytes.ts";
import { pinRoutes } from "./pin-routes.ts";
import { problem, type AdminEnv } from "./route-context.ts";
import { sessionRoutes } from "./session-routes.ts";
import { tokenRoutes } from "./token-routes.ts";
import { usageRoutes } from "./usage-routes.ts";
import { userRoutes } from "./user-routes.ts";

export const admin = new Hono<AdminEnv>();

/** Where the Worker reads the document: assets/admin/openapi.json through the ASSETS binding. */
export const OPENAPI_URL = "https://assets.local/admin/openapi.json";

admin.get("/openapi.json", async (c) => {
  const bytes = await assetBytes(c.env.ASSETS, OPENAPI_URL, "the admin API's OpenAPI document", "`node scripts/setup.mjs` writes it");
  return c.body(bytes, 200, { "content-type": "application/json; charset=utf-8" });
});

admin.use("/teams/*", adminAuth);

for (const routes of [configRoutes, tokenRoutes, pinRoutes, sessionRoutes, usageRoutes, auditRoutes, userRoutes, accountRoutes]) admin.route("/", routes);

admin.all("*", (c) => problem(c, 404, "not_found", "No such admin route; see /admin/openapi.json."));
