// The OAuth secrets (authorization codes, refresh tokens) the team's token endpoint has honoured in the last ten
// minutes, by SHA-256: the one place where "used once" is decided at once for every isolate and location. The
// library's own records live in eventually consistent KV, so two uses of one secret that overlap (or reach another
// location before its write does) would both be honoured there; here the second one is told apart.
//
// Keys are `spent:<bucket>:<sha256>`, a bucket being five minutes: a spend is looked for in the last three buckets
// (kept ten to fifteen minutes), and older buckets are deleted as new spends come (at most a batch each time), so
// storage holds about a quarter hour of the team's token requests.

/** Five minutes per bucket; three buckets looked at: at least ten minutes. */
const BUCKET_MS = 5 * 60_000;
const BUCKETS_KEPT = 3;
const PREFIX = "spent:";
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** What one storage delete takes at most. */
const SWEEP_BATCH = 128;

/** A bucket's number, zero-padded so that keys sort by time. */
const bucketOf = (now: number, back = 0): string => String(Math.floor(now / BUCKET_MS) - back).padStart(12, "0");

export class SpentSecrets {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  /**
   * Records that the secret hashed to `hash` was honoured; true when it is the first time within the window, false
   * when it was already (a second use). No other call reaches the object while this one waits for its storage (the
   * input gate), so of two overlapping uses exactly one is first.
   */
  async spend(hash: string): Promise<boolean> {
    if (!SHA256_HEX.test(hash)) throw new Error("a spent secret is named by its SHA-256, in lowercase hex");
    const now = Date.now();
    const keys = Array.from({ length: BUCKETS_KEPT }, (_, back) => `${PREFIX}${bucketOf(now, back)}:${hash}`);
    const seen = await this.#storage.get(keys);
    if (seen.size > 0) return false;
    await this.#storage.put(keys[0]!, now);
    const old = await this.#storage.list({ prefix: PREFIX, end: `${PREFIX}${bucketOf(now, BUCKETS_KEPT - 1)}`, limit: SWEEP_BATCH });
    if (old.size > 0) await this.#storage.delete([...old.keys()]);
    return true;
  }
}
