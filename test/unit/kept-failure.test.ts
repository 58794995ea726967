// An upstream's failure is kept with its kind and connect link as data (src/lib/upstream-fault.ts, KeptFailure): the
// record a failed eager upstream leaves carries them, a call of its tool takes the link for `_meta` from there, and the
// catalog line shows an account instruction whole because of its kind, never because of how its words begin. Real
// registry over a connect that fails as an OAuth upstream without the member's account does.
import { describe, expect, it } from "vitest";
import type { CallToolResult } from "@modelcontextprotocol/server";
import { renderDiscoverDescription } from "../../src/catalog/render.ts";
import type { ResolvedConfig, UpstreamSpec } from "../../src/config/validate.ts";
import { UpstreamError, errorKindOf } from "../../src/lib/errors.ts";
import { findTool, registryNames } from "../../src/views/find-tool.ts";
import type { RegistryStore, UpstreamRecord } from "../../src/upstream/records.ts";
import { UpstreamRegistry } from "../../src/upstream/registry.ts";
import { keptFailure, reasonLine } from "../../src/lib/upstream-fault.ts";

const LINK = "https://proxy.example/t/acme/connect/cx1.abc";
const spec = { name: "crm", transport: "http", url: "https://crm.example/mcp", headers: {}, timeout: 5_000 } as unknown as UpstreamSpec;

async function failedRegistry(records = new Map<string, UpstreamRecord>()) {
  const store: RegistryStore = { all: async () => new Map(records), put: async (name, record) => void records.set(name, record) };
  const registry = new UpstreamRegistry({ mode: "multi", upstreams: [spec] } as ResolvedConfig, store, {
    connect: async () => {
      throw new UpstreamError("crm", { kind: "auth_required", detail: "your account is not connected", connectUrl: LINK });
    },
  });
  await registry.restore();
  await registry.ensureEager();
  return { registry, records };
}

describe("a kept failure", () => {
  it("keeps the fault's kind and an account's connect link beside its words", () => {
    expect(keptFailure({ kind: "auth_required", detail: "not connected", connectUrl: LINK })).toMatchObject({ kind: "auth_required", connectUrl: LINK });
    expect(keptFailure({ kind: "http", status: 503, detail: "" })).toEqual({ reason: "HTTP 503", kind: "http" });
  });

  it("is shown whole for its kind, one short line otherwise, whatever its words begin with", () => {
    const long = "needs an account: first sentence. Then a second one that a catalog line would cut off here";
    expect(reasonLine({ reason: long, kind: "auth_required" }, () => "cut")).toBe(long);
    expect(reasonLine({ reason: long, kind: "unreachable" }, () => "cut")).toBe("cut");
    expect(reasonLine({ reason: long }, () => "cut")).toBe("cut");
  });

  it("is what a failed eager upstream's record keeps, and what a call of its tool and the catalog line read", async () => {
    const { registry, records } = await failedRegistry();
    expect(records.get("crm")).toMatchObject({ status: "failed", kind: "auth_required", connectUrl: LINK });
    expect(registry.failure("crm")).toMatchObject({ kind: "auth_required", connectUrl: LINK });
    const answer = (await findTool(registry, registryNames(registry, "load_mcp"), "crm/search")) as CallToolResult;
    expect(errorKindOf(answer)).toMatchObject({ kind: "unavailable", upstream: "crm", connectUrl: LINK });
    expect(renderDiscoverDescription(registry.view())).toContain(`crm: unavailable — ${registry.failure("crm")!.reason}`);
  });

  it("is read by its kind, not its words: a record whose words do not begin as an account's do is still shown whole", async () => {
    const reason = "Your account is not connected. Ask the user to open the link, then call again.";
    const records = new Map<string, UpstreamRecord>([["crm", { status: "failed", reason, kind: "auth_required", connectUrl: LINK, at: Date.now() }]]);
    const store: RegistryStore = { all: async () => new Map(records), put: async (name, record) => void records.set(name, record) };
    const registry = new UpstreamRegistry({ mode: "multi", upstreams: [spec] } as ResolvedConfig, store, { connect: () => new Promise(() => {}) });
    await registry.restore();
    expect(renderDiscoverDescription(registry.view())).toContain(`crm: unavailable — ${reason}`);
    expect(registry.failure("crm")).toMatchObject({ connectUrl: LINK });
  });
});
