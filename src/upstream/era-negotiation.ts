// Which protocol era an upstream client speaks, and when it changes its mind. A streamable-HTTP upstream's era is
// negotiated by the SDK (`server/discover` first, `initialize` when the upstream shows no 2026 evidence); a verdict
// kept between connections (store/era-cache.ts) skips the probe. A kept verdict can be stale (era-verdict.ts): a
// connect from it that fails for that reason, or a first request on a modern one that the upstream turns away as that
// era, drops it and negotiates afresh, once, on a new link. What a negotiation established is kept for the next one.
import type { Client } from "@modelcontextprotocol/client";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError } from "../lib/errors.ts";
import type { Link } from "./client-link.ts";
import { staleAtConnect, staleOnRequest, verdictOf, type EraCache, type PriorVerdict } from "./era-verdict.ts";

/** What negotiating needs of the client it negotiates for. */
export interface NegotiationParts {
  spec: UpstreamSpec;
  /** The verdict cache, only for an upstream whose era is negotiated (see UpstreamClient's `#negotiates`). */
  eras: EraCache | undefined;
  /** A new link, nothing sent yet; `fromModernVerdict` marks it unconfirmed. */
  build(fromModernVerdict: boolean): Link;
  /** Connects a link (probe, `initialize`, or a verdict adopted); on failure it is retired and closed. */
  bringUp(link: Link, prior: PriorVerdict | undefined, signal?: AbortSignal): Promise<void>;
  /** A failure of `link` (or of the link in use) as the client's UpstreamError. */
  convert(err: unknown, link?: Link): UpstreamError;
  closed(): boolean;
  close(): Promise<void>;
}

/** The link a client speaks on: the first, from a cached verdict where there is one, and its replacement if stale. */
export class NegotiatedLink {
  readonly #parts: NegotiationParts;
  /** The connection in use: set once start() succeeds, replaced only when a cached modern verdict proved stale. */
  #current: Link | undefined;
  /** The renegotiation under way after a stale verdict, shared by every request that ran into it. */
  #renegotiating: Promise<void> | undefined;

  constructor(parts: NegotiationParts) {
    this.#parts = parts;
  }

  get current(): Link | undefined {
    return this.#current;
  }

  /**
   * Brings up the first link: from the cached verdict when there is one; when that fails because the verdict is
   * stale, the verdict is dropped and the era negotiated afresh, once. When `signal` aborts first, the attempt fails
   * with the signal's reason.
   */
  async start(signal?: AbortSignal): Promise<void> {
    const { eras, spec } = this.#parts;
    const prior = eras ? await eras.get(spec).catch(() => undefined) : undefined;
    const first = this.#parts.build(prior?.kind === "modern");
    try {
      await this.#parts.bringUp(first, prior, signal);
      this.#current = first;
    } catch (err) {
      if (!eras || !prior || signal?.aborted || !staleAtConnect(prior, err)) throw this.#parts.convert(signal?.aborted ? signal.reason : err, first);
      // The cached verdict no longer holds: forget it and negotiate afresh, once.
      await eras.drop(spec).catch(() => {});
      const second = this.#parts.build(false);
      try {
        await this.#parts.bringUp(second, undefined, signal);
      } catch (again) {
        throw this.#parts.convert(signal?.aborted ? signal.reason : again, second);
      }
      this.#current = second;
      await this.#remember(second);
      return;
    }
    if (eras && !prior) await this.#remember(first);
  }

  /**
   * Runs one request on the current link. When the first request sent on a cached modern verdict is turned away
   * as the verdict's era (see staleStatus, -32022), the verdict is dropped, the era negotiated afresh on a new
   * link, and the request sent once more there: the upstream did not run it the first time.
   */
  async send<T>(work: (client: Client) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const link = this.#current!;
    try {
      const result = await work(link.client);
      link.unconfirmed = false;
      return result;
    } catch (err) {
      if (!link.unconfirmed || this.#parts.closed() || !staleOnRequest(err, link.rejected)) throw err;
      await this.#renegotiate(link, signal);
      return await work(this.#current!.client);
    }
  }

  /** Replaces a link whose modern verdict proved stale; a renegotiation that fails closes the client. */
  async #renegotiate(stale: Link, signal?: AbortSignal): Promise<void> {
    if (this.#current === stale && !this.#renegotiating) {
      this.#renegotiating = this.#replace(stale, signal).finally(() => {
        this.#renegotiating = undefined;
      });
    }
    await this.#renegotiating;
  }

  async #replace(stale: Link, signal?: AbortSignal): Promise<void> {
    const parts = this.#parts;
    await parts.eras?.drop(parts.spec).catch(() => {});
    const fresh = parts.build(false);
    try {
      await parts.bringUp(fresh, undefined, signal);
    } catch (err) {
      const error = parts.convert(err, fresh);
      await parts.close();
      throw error;
    }
    if (parts.closed()) {
      fresh.retired = true;
      await fresh.client.close().catch(() => {});
      throw new UpstreamError(parts.spec.name, { kind: "closed" });
    }
    stale.retired = true;
    this.#current = fresh;
    // A modern link holds no session: closing it sends nothing.
    void stale.client.close().catch(() => {});
    // A 2025 link opens its GET stream by itself after initialize: the chain lets it through if it is wanted.
    await this.#remember(fresh);
  }

  /** Keeps what a negotiation established (best-effort: a cache that fails costs a probe next time, nothing more). */
  async #remember(link: Link): Promise<void> {
    const eras = this.#parts.eras;
    if (!eras) return;
    const verdict = verdictOf(link.client);
    if (verdict) await eras.put(this.#parts.spec, verdict).catch(() => {});
  }
}
