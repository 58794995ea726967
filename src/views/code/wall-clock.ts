// A code-mode run's wall clock: it runs from the load to the answer, except while a call holds it (a person deciding
// whether to allow the call), and then for at most `maxHeldMs` in all: other calls of the program may go on meanwhile,
// and they are the program's time.

export class WallClock {
  readonly #expired: Promise<void>;
  #expire: () => void = () => {};
  #timer: ReturnType<typeof setTimeout> | undefined;
  #left: number;
  #since = Date.now();
  #holds = 0;
  #heldLeft: number;
  #heldSince = 0;
  #heldTimer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  /** Starts the clock: `expired` settles once `wallMs` of unheld time have passed. */
  constructor(wallMs: number, maxHeldMs: number) {
    this.#left = Math.max(0, wallMs);
    this.#heldLeft = Math.max(0, maxHeldMs);
    this.#expired = new Promise<void>((resolve) => (this.#expire = resolve));
    this.#arm();
  }

  /** Settles when the run is out of time. */
  get expired(): Promise<void> {
    return this.#expired;
  }

  /** Stops the clock while `during` is pending (within the hold budget), then lets it run on. */
  async hold<T>(during: Promise<T>): Promise<T> {
    if (this.#holds++ === 0 && this.#timer !== undefined && this.#heldLeft > 0) this.#pause();
    try {
      return await during;
    } finally {
      if (--this.#holds === 0 && this.#heldTimer !== undefined) this.#resume();
    }
  }

  /** The run has ended: no timer is left behind. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#heldTimer !== undefined) clearTimeout(this.#heldTimer);
  }

  #arm(): void {
    this.#since = Date.now();
    this.#timer = setTimeout(() => this.#expire(), this.#left);
  }

  #pause(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#left = Math.max(0, this.#left - (Date.now() - this.#since));
    this.#heldSince = Date.now();
    // The clock starts again when the hold budget is spent, whether or not the question is answered by then.
    this.#heldTimer = setTimeout(() => {
      this.#heldTimer = undefined;
      this.#heldLeft = 0;
      if (!this.#stopped) this.#arm();
    }, this.#heldLeft);
  }

  #resume(): void {
    if (this.#heldTimer !== undefined) clearTimeout(this.#heldTimer);
    this.#heldTimer = undefined;
    this.#heldLeft = Math.max(0, this.#heldLeft - (Date.now() - this.#heldSince));
    if (!this.#stopped) this.#arm();
  }
}
