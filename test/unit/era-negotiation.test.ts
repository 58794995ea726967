// An upstream client's era on its own (src/upstream/era-verdict.ts, era-negotiation.ts): which failures prove a kept
// verdict stale, and what the negotiated link does then. test/unit/upstream-era.test.ts shows the same against real
// upstreams through the whole client; here the links are stand-ins (a link's SDK client reduced to what negotiation
// reads of it: its era, its discover result, close), so each rule is seen alone.
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, SdkHttpError, type Client } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import type { UpstreamSpec } from "../../src/config/validate.ts";
import { UpstreamError } from "../../src/lib/errors.ts";
import type { Link } from "../../src/upstream/client-link.ts";
import { NegotiatedLink, type NegotiationParts } from "../../src/upstream/era-negotiation.ts";
import { rpcError, staleAtConnect, staleOnRequest, staleStatus, verdictOf, type EraCache, type PriorVerdict } from "../../src/upstream/era-verdict.ts";

const DISCOVER = { supportedVersions: ["2026-07-28"], capabilities: {}, serverInfo: { name: "u", version: "1" } } as never;
const MODERN: PriorVerdict = { kind: "modern", discover: DISCOVER };
const LEGACY: PriorVerdict = { kind: "legacy" };

const httpError = (status: number, text?: string) =>
  new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `HTTP ${status}`, { status, ...(text === undefined ? {} : { text }) });
const eraFailed = () => new SdkError(SdkErrorCode.EraNegotiationFailed, "no mutual revision");

describe("era verdict rules", () => {
  it("reads a 4xx as the era's refusal, but not auth, timeouts, size or rate limits", () => {
    expect([400, 404, 405, 406, 415, 422].every(staleStatus)).toBe(true);
    expect([401, 403, 408, 413, 429, 500, 503, 200].some(staleStatus)).toBe(false);
  });

  it("finds the JSON-RPC error in an HTTP error's body, and nothing in another body", () => {
    expect(rpcError(httpError(404, JSON.stringify({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "no such method" } })))).toEqual({
      code: -32601,
      message: "no such method",
    });
    expect(rpcError(httpError(400, JSON.stringify({ error: { code: -32602 } })))).toEqual({ code: -32602, message: "" });
    expect(rpcError(httpError(400, "<html>"))).toBeUndefined();
    expect(rpcError(httpError(400, JSON.stringify({ error: { code: "x" } })))).toBeUndefined();
    expect(rpcError(httpError(400))).toBeUndefined();
  });

  it("holds a connect stale only for the verdict's own failure", () => {
    expect(staleAtConnect(MODERN, eraFailed())).toBe(true);
    expect(staleAtConnect(MODERN, httpError(400))).toBe(false);
    expect(staleAtConnect(LEGACY, new ProtocolError(ProtocolErrorCode.UnsupportedProtocolVersion, "2026 only"))).toBe(true);
    expect(staleAtConnect(LEGACY, eraFailed())).toBe(false);
    expect(staleAtConnect(LEGACY, new ProtocolError(ProtocolErrorCode.InvalidParams, "bad"))).toBe(false);
  });

  it("holds a first request stale when turned away as the era, never for what it asked", () => {
    expect(staleOnRequest(httpError(400), false)).toBe(true);
    expect(staleOnRequest(httpError(401), false)).toBe(false);
    expect(staleOnRequest(eraFailed(), false)).toBe(true);
    expect(staleOnRequest(new ProtocolError(ProtocolErrorCode.UnsupportedProtocolVersion, "x"), false)).toBe(true);
    // A ProtocolError hides the status: the link's note of a stale-looking one decides.
    expect(staleOnRequest(new ProtocolError(-32000, "bad request"), true)).toBe(true);
    expect(staleOnRequest(new ProtocolError(-32000, "bad request"), false)).toBe(false);
    // A 2026 server's refusal of the request itself, however framed.
    const refusal = (code: number) => httpError(404, JSON.stringify({ error: { code, message: "no" } }));
    for (const code of [ProtocolErrorCode.MethodNotFound, ProtocolErrorCode.InvalidParams, ProtocolErrorCode.MissingRequiredClientCapability, -32020]) {
      expect(staleOnRequest(refusal(code), true)).toBe(false);
      expect(staleOnRequest(new ProtocolError(code, "no"), true)).toBe(false);
    }
    expect(staleOnRequest(new Error("network"), true)).toBe(false);
  });

  it("keeps what a negotiation established: modern with its discover result, or legacy", () => {
    const client = (era: string | undefined, discover?: unknown) => ({ getProtocolEra: () => era, getDiscoverResult: () => discover }) as unknown as Client;
    expect(verdictOf(client("modern", DISCOVER))).toEqual(MODERN);
    expect(verdictOf(client("legacy"))).toEqual(LEGACY);
    expect(verdictOf(client("modern"))).toBeUndefined();
    expect(verdictOf(client(undefined))).toBeUndefined();
  });
});

const SPEC = { name: "u", url: "https://u.example/mcp", transport: "streamable-http" } as UpstreamSpec;

/** A stand-in link whose SDK client speaks `era` once brought up. */
function fakeLink(era: "modern" | "legacy", fromModernVerdict: boolean): Link & { closedCount: number } {
  const link = {
    closedCount: 0,
    client: {
      getProtocolEra: () => era,
      getDiscoverResult: () => (era === "modern" ? DISCOVER : undefined),
      close: async () => {
        link.closedCount++;
      },
    } as unknown as Client,
    unconfirmed: fromModernVerdict,
    rejected: false,
    retired: false,
  } as unknown as Link & { closedCount: number };
  return link;
}

/**
 * Negotiation over stand-in links: `failures` are what successive bring-ups throw (undefined: it succeeds; a function:
 * it runs, and the bring-up succeeds).
 */
function negotiation(cached: PriorVerdict | undefined, failures: unknown[] = [], eraAfterNegotiating: "modern" | "legacy" = "legacy") {
  const store = { verdict: cached, puts: [] as PriorVerdict[], drops: 0 };
  const eras: EraCache = {
    get: async () => store.verdict,
    put: async (_spec, verdict) => {
      store.puts.push(verdict);
      store.verdict = verdict;
    },
    drop: async () => {
      store.drops++;
      store.verdict = undefined;
    },
  };
  const built: Link[] = [];
  const priors: Array<PriorVerdict | undefined> = [];
  let closed = false;
  const parts: NegotiationParts = {
    spec: SPEC,
    eras,
    build: (fromModernVerdict) => {
      const link = fakeLink(fromModernVerdict ? "modern" : eraAfterNegotiating, fromModernVerdict);
      built.push(link);
      return link;
    },
    bringUp: async (_link, prior) => {
      priors.push(prior);
      const failure = failures.shift();
      if (typeof failure === "function") failure();
      else if (failure !== undefined) throw failure;
    },
    convert: (err) => (err instanceof UpstreamError ? err : new UpstreamError("u", { kind: "protocol", detail: String(err) })),
    closed: () => closed,
    close: async () => {
      closed = true;
    },
  };
  return { links: new NegotiatedLink(parts), store, built, priors, close: () => (closed = true) };
}

describe("NegotiatedLink", () => {
  it("negotiates without a verdict and keeps what it found", async () => {
    const n = negotiation(undefined);
    await n.links.start();
    expect(n.priors).toEqual([undefined]);
    expect(n.links.current).toBe(n.built[0]);
    expect(n.store.puts).toEqual([LEGACY]);
  });

  it("connects from a kept verdict and writes nothing", async () => {
    const n = negotiation(MODERN);
    await n.links.start();
    expect(n.priors).toEqual([MODERN]);
    expect(n.links.current?.unconfirmed).toBe(true);
    expect(n.store.puts).toEqual([]);
  });

  it("drops a verdict the connect proved stale and negotiates afresh, once", async () => {
    const n = negotiation(MODERN, [eraFailed()]);
    await n.links.start();
    expect(n.priors).toEqual([MODERN, undefined]);
    expect(n.store.drops).toBe(1);
    expect(n.links.current).toBe(n.built[1]);
    expect(n.store.puts).toEqual([LEGACY]);
  });

  it("keeps a verdict when the connect failed for another reason, and fails with it", async () => {
    const n = negotiation(MODERN, [httpError(401)]);
    await expect(n.links.start()).rejects.toBeInstanceOf(UpstreamError);
    expect(n.store.drops).toBe(0);
    expect(n.store.verdict).toEqual(MODERN);
    expect(n.links.current).toBeUndefined();
  });

  it("fails with the signal's reason once aborted, whatever the verdict", async () => {
    const n = negotiation(MODERN, [eraFailed()]);
    const abort = new AbortController();
    abort.abort(new UpstreamError("u", { kind: "timeout", ms: 5 }));
    await expect(n.links.start(abort.signal)).rejects.toMatchObject({ fault: { kind: "timeout" } });
    expect(n.store.drops).toBe(0);
  });

  it("renegotiates once when the first request on a modern verdict is turned away, shared by every request", async () => {
    const n = negotiation(MODERN);
    await n.links.start();
    const stale = n.links.current!;
    const sent: Link[] = [];
    const work = async (client: Client) => {
      sent.push(n.built.find((l) => l.client === client)!);
      if (client === stale.client) throw httpError(400);
      return "ok";
    };
    expect(await Promise.all([n.links.send(work), n.links.send(work)])).toEqual(["ok", "ok"]);
    expect(n.built).toHaveLength(2);
    expect(stale.retired).toBe(true);
    expect((stale as Link & { closedCount: number }).closedCount).toBe(1);
    expect(n.links.current).toBe(n.built[1]);
    expect(n.store.drops).toBe(1);
    expect(n.store.puts).toEqual([LEGACY]);
    expect(sent.filter((l) => l === n.built[1])).toHaveLength(2);
  });

  it("trusts a verdict an answer confirmed, and passes other failures on untouched", async () => {
    const n = negotiation(MODERN);
    await n.links.start();
    expect(await n.links.send(async () => 1)).toBe(1);
    expect(n.links.current?.unconfirmed).toBe(false);
    const turnedAway = httpError(400);
    await expect(n.links.send(async () => Promise.reject(turnedAway))).rejects.toBe(turnedAway);
    expect(n.built).toHaveLength(1);
  });

  it("closes the client when the renegotiation fails, and leaves a closed client closed", async () => {
    const failing = negotiation(MODERN, [undefined, httpError(503)]);
    await failing.links.start();
    await expect(failing.links.send(async () => Promise.reject(httpError(400)))).rejects.toBeInstanceOf(UpstreamError);
    const closedMeanwhile = negotiation(MODERN);
    await closedMeanwhile.links.start();
    const work = async () => {
      closedMeanwhile.close();
      throw httpError(400);
    };
    // Closed before the failure was read: nothing is renegotiated.
    await expect(closedMeanwhile.links.send(work)).rejects.toBeInstanceOf(SdkHttpError);
    expect(closedMeanwhile.built).toHaveLength(1);
  });

  it("retires and closes a fresh link when the client closed while it came up", async () => {
    const n = negotiation(MODERN, [undefined, () => n.close()]);
    await n.links.start();
    const stale = n.links.current!;
    await expect(n.links.send(async () => Promise.reject(httpError(400)))).rejects.toMatchObject({ fault: { kind: "closed" } });
    const fresh = n.built[1] as Link & { closedCount: number };
    expect(fresh.retired).toBe(true);
    expect(fresh.closedCount).toBe(1);
    expect(n.links.current).toBe(stale);
    expect(n.store.puts).toEqual([]);
  });
});
