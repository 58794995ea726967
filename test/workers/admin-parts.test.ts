// The admin API's shared parts on their own: what every route reads and answers with (src/edge/admin/route-context.ts, over
// a Hono app of this test's) and which OAuth upstreams a config change makes stale (src/edge/admin/stale-upstream-accounts.ts).
// The routes that use them: test/workers/security.test.ts, oauth-admin.test.ts, upstream-accounts.test.ts.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { isResponse, jsonBody, params, type AdminEnv } from "../../src/edge/admin/route-context.ts";
import { staleOAuthUpstreams } from "../../src/edge/admin/stale-upstream-accounts.ts";

const app = new Hono<AdminEnv>();
app.put("/things/:id", async (c) => {
  const p = params(c, z.object({ id: z.string().regex(/^[a-z]+$/) }));
  if (isResponse(p)) return p;
  const body = await jsonBody(c, z.strictObject({ n: z.number() }));
  if (isResponse(body)) return body;
  return c.json({ id: p.id, n: body.value.n });
});

const put = (path: string, body: BodyInit, type = "application/json") =>
  app.request(path, { method: "PUT", headers: { "content-type": type }, body });

describe("admin route context", () => {
  it("hands on a valid path and body", async () => {
    const res = await put("/things/abc", JSON.stringify({ n: 1 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: "abc", n: 1 });
  });

  it("says which path parameter is wrong", async () => {
    const res = await put("/things/A1", JSON.stringify({ n: 1 }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_path", issues: [{ path: "id" }] });
  });

  it("refuses another media type, a body over 1 MiB, bad JSON and a body that does not validate, each as itself", async () => {
    expect(await (await put("/things/abc", "{}", "text/plain")).json()).toMatchObject({ error: "unsupported_media_type" });
    const large = await put("/things/abc", JSON.stringify({ n: 1, pad: "x".repeat(1024 * 1024) }));
    expect(large.status).toBe(413);
    expect(await large.json()).toMatchObject({ error: "too_large" });
    expect(await (await put("/things/abc", "{")).json()).toMatchObject({ error: "invalid_json" });
    const invalid = await put("/things/abc", JSON.stringify({ n: "1", extra: true }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ error: "invalid_body", issues: expect.arrayContaining([expect.objectContaining({ path: "n" })]) });
  });
});

describe("staleOAuthUpstreams", () => {
  const oauth = { type: "oauth", mode: "shared" };
  const before = { mcp: { a: { url: "https://a.example", auth: oauth }, b: { url: "https://b.example", auth: oauth }, c: { url: "https://c.example" } } };

  it("names the OAuth upstreams a new config drops, takes auth from or points elsewhere", () => {
    const after = { mcp: { a: { url: "https://a.example", auth: oauth }, b: { url: "https://b2.example", auth: oauth }, c: { url: "https://c.example", auth: oauth } } };
    expect(staleOAuthUpstreams(before, after)).toEqual(["b"]);
    expect(staleOAuthUpstreams(before, { mcp: { a: { url: "https://a.example" } } })).toEqual(["a", "b"]);
    expect(staleOAuthUpstreams(before, undefined)).toEqual(["a", "b"]);
  });

  it("reads a single-MCP config as its one upstream, and anything unreadable as none", () => {
    expect(staleOAuthUpstreams({ url: "https://s.example", auth: oauth }, { url: "https://t.example", auth: oauth })).toHaveLength(1);
    expect(staleOAuthUpstreams("not a config", undefined)).toEqual([]);
    expect(staleOAuthUpstreams({ mcp: [] }, undefined)).toEqual([]);
  });
});
