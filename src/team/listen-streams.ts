// The team's 2026-era `subscriptions/listen` streams as its index object holds them: one handler per object life
// (src/modern/listen.ts), made with the first stream, and the changes announced on it, a changed tool list once
// however many of the team's objects report it.
import type { ListsChanged } from "../lib/env.ts";
import { TeamListen, type ListenLimits } from "../modern/listen.ts";
import { BoundedCache } from "../lib/bounded-cache.ts";

/** Upstreams whose tools digest is remembered at most (a config names far fewer). */
export const MAX_SERVERS = 1000;

export class ListenStreams {
  /** What one principal's streams may hold: read when the first stream opens (a test may shorten it before). */
  limits: ListenLimits;
  /**
   * Made with the first stream (a change announced before any stream opened has nobody to reach). Streams live in
   * memory only: an eviction or a deploy ends them, and the hosts listen again.
   */
  #listen: TeamListen | undefined;
  /**
   * The last tools digest heard of each upstream, kept as long as the streams it serves (an eviction ends both):
   * objects that read the same change anew (a principal's after another's, or all at once) announce it once.
   */
  readonly #toolDigests = new BoundedCache<string, string>({ max: MAX_SERVERS });

  constructor(limits: ListenLimits) {
    this.limits = limits;
  }

  /** Serves one listen request of `principal` (`t:<token id>` or `u:<user id>`). */
  fetch(request: Request, principal: string): Promise<Response> {
    this.#listen ??= new TeamListen(this.limits);
    return this.#listen.fetch(request, principal);
  }

  /** Announces changed lists on the open streams (none open: nothing happens). */
  publish(what: ListsChanged): void {
    this.#listen?.publish(what);
  }

  /** An upstream's tools were read anew with this digest: announced as a tools list change unless already heard. */
  catalogChanged(server: string, digest: string): void {
    if (this.#toolDigests.get(server) === digest) return;
    this.#toolDigests.set(server, digest);
    this.publish({ tools: true });
  }

  /** Streams open right now. */
  get open(): number {
    return this.#listen?.open ?? 0;
  }
}
