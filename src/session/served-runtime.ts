// One runtime of a session object and the requests it is serving. Each request is counted from the moment it takes
// the runtime until the body of its answer ends, however it ends (written to its end, failed, or cancelled by the
// host); the host's GET streams are counted apart (while one is open, upstreams keep their streams open too). An
// admin reload retires the runtime instead of closing it: new requests go to the next one, while the calls this one
// is answering finish on the upstream clients they started with.
import { tapResponse } from "../lib/streams.ts";
import type { ModernRuntime, Runtime } from "./runtime.ts";
import type { SessionTransport } from "./transport.ts";

export type AnyRuntime = Runtime | ModernRuntime;

/** One request's hold on its runtime. */
export interface Lease {
  /** The request's answer: the hold lasts until its body ends (a stream's), or ends now (a complete answer's). */
  answer(response: Response): Response;
  /** The host's GET stream: counted as a host stream until its body ends. */
  hostStream(response: Response): Response;
  /** Lets go, unless an answer holds on (call it in a `finally`). */
  done(): void;
}

export class ServedRuntime {
  readonly runtime: Promise<AnyRuntime>;
  /** The runtime once built: retiring then acts at once, before anything of the runtime runs again. */
  #built: AnyRuntime | undefined;
  #serving = 0;
  #hostStreams = 0;
  #retired = false;
  /** Built by a reload: the host's GET stream, when it opens here, hears that its lists may have changed. */
  #announce: boolean;
  /** Set once a retired runtime has begun to close (when its last request is over). */
  #closing = false;
  readonly #onRetiredClosed: () => void;

  constructor(runtime: Promise<AnyRuntime>, { afterReload, onRetiredClosed }: { afterReload: boolean; onRetiredClosed: () => void }) {
    this.runtime = runtime;
    this.#announce = afterReload;
    this.#onRetiredClosed = onRetiredClosed;
    runtime.then(
      (built) => {
        this.#built = built;
        if (this.#retired) this.#retireParts(built);
      },
      () => this.#retired && onRetiredClosed(),
    );
  }

  /** Requests taken and answers not ended yet (host streams apart): while there is one, the runtime is not idle. */
  get answering(): number {
    return this.#serving;
  }

  get hostStreams(): number {
    return this.#hostStreams;
  }

  /** A 2025 session's transport, once built. */
  get transport(): SessionTransport | undefined {
    return this.#built && "transport" in this.#built ? this.#built.transport : undefined;
  }

  /** Counts a request from now on. */
  take(): Lease {
    this.#serving++;
    let held = true;
    let carried = false;
    const release = () => {
      if (!held) return;
      held = false;
      this.#serving--;
      this.#settle();
    };
    return {
      answer: (response) => {
        // A complete answer (JSON, or no body) ends as it is made; only a stream is followed to its end.
        if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
          release();
          return response;
        }
        carried = true;
        return tapResponse(response, { end: release });
      },
      hostStream: (response) => {
        carried = true;
        this.#streamOpened();
        release();
        return tapResponse(response, { end: () => this.#streamClosed() });
      },
      done: () => {
        if (!carried) release();
      },
    };
  }

  /**
   * A reload replaced this runtime. Its registry writes no upstream record from now on (the next runtime's owns them);
   * the host's GET stream on it ends (the host opens it again, on the next runtime); its upstream clients close once
   * its last answer has ended and no upstream request through it is under way (a 2026 call parked for the host's
   * input, which the host resumes through the next runtime, included).
   */
  retire(): void {
    if (this.#retired) return;
    this.#retired = true;
    if (this.#built) this.#retireParts(this.#built);
  }

  /** Closes the upstream clients now, whatever still runs on them (the session ended, or sat idle). */
  close(): Promise<void> {
    return this.runtime.then((runtime) => runtime.registry.closeAll(), () => {});
  }

  /** Ends the host's GET stream, if one is open: the session is ending under it (the host starts a new one at its 404). */
  endHostStream(): void {
    if (this.#built && "transport" in this.#built) this.#built.transport.closeStandaloneSSEStream();
  }

  #retireParts(runtime: AnyRuntime): void {
    runtime.registry.retire();
    if ("transport" in runtime) runtime.transport.closeStandaloneSSEStream();
    this.#settle();
  }

  /** A retired runtime that serves nothing any more closes its clients when no upstream request needs them. */
  #settle(): void {
    if (!this.#retired || !this.#built || this.#serving > 0 || this.#hostStreams > 0 || this.#closing) return;
    this.#closing = true;
    void this.#built.registry.closeWhenIdle().then(this.#onRetiredClosed, this.#onRetiredClosed);
  }

  #streamOpened(): void {
    const runtime = this.#built;
    this.#hostStreams++;
    if (!runtime) return;
    if (this.#retired) {
      // Opened while a reload retired this runtime: ended at once too, so that the host opens it on the next one.
      if ("transport" in runtime) runtime.transport.closeStandaloneSSEStream();
      return;
    }
    if (this.#hostStreams > 1) return;
    void runtime.registry.setStreaming(true);
    if (this.#announce && "listsChanged" in runtime) {
      this.#announce = false;
      void runtime.listsChanged();
    }
  }

  #streamClosed(): void {
    // A retired runtime's clients stay as they are: its calls still run on them, and they close with it.
    if (--this.#hostStreams === 0 && !this.#retired) void this.#built?.registry.setStreaming(false);
    this.#settle();
  }
}
