// A session object's audit outbox: each entry is written to the object's storage as the call ends, before its answer
// goes, then shipped to the team's trail (src/team/audit-trail.ts) in batches and deleted here only once the team's
// index took them. The write is one put per call: the object's output gate holds the answer (and the batch's RPC)
// until it is durable, so the answer waits for the disk, never for a round trip of ours. A batch that does not arrive
// (the index unreachable, the object evicted while sending) stays and goes again: at the next entry, at the object's
// alarm, or at its end (kept past the end until sent). The trail takes entries by id, so a batch sent twice counts once.
import * as z from "zod";
import { AUDIT_DAYS } from "../config/schema.ts";
import type { Env } from "../lib/env.ts";
import { log } from "../lib/log.ts";
import { accepted } from "../store/kv.ts";
import { AuditEntry } from "../views/audit-entry.ts";
import type { AuditRecorder } from "../views/call-audit.ts";

/** `audit:<entry id>`: one entry waiting to be shipped (ids sort by time, so the oldest go first). */
const OUTBOX_PREFIX = "audit:";
/**
 * How long after an entry the waiting ones are shipped: the calls of a second share one RPC to the team's index. A
 * ship costs the object a list, an RPC and a delete beside the calls it serves; at 50 ms a host calling every 35 ms
 * paid one per call (bench:audit-dev measured 2.5 ms of a call's p50), at a second it pays one per second or so.
 * The trail is that much behind the calls; the entries are durable here meanwhile.
 */
const SHIP_DELAY_MS = 1000;
/** Entries in one RPC to the team's index. */
export const AUDIT_BATCH = 200;

/** What the outbox keeps of an entry: the team it goes to, how long the team keeps entries, the entry. */
const Outboxed = z.object({ team: z.string().min(1), days: z.number().int().positive(), entry: AuditEntry });
type Outboxed = z.infer<typeof Outboxed>;

/** Sends a batch to the team's trail; answers how many were new there. */
export type AuditSend = (team: string, entries: AuditEntry[], days: number) => Promise<number>;

/** How long a batch's RPC may take before it counts as failed (its entries stay, and go again later). */
const SEND_DEADLINE_MS = 10_000;

/** A send that has not answered within SEND_DEADLINE_MS is taken as failed: a hung index must not stop the outbox. */
async function withinDeadline<T>(sending: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the team index did not answer within ${SEND_DEADLINE_MS} ms`)), SEND_DEADLINE_MS);
  });
  try {
    return await Promise.race([sending, late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class AuditOutbox implements AuditRecorder {
  readonly #storage: DurableObjectStorage;
  /** How a batch reaches the team's index (a test may put a fault in its place). */
  send: AuditSend;
  #shipping: Promise<void> | undefined;
  /** An entry came while a batch was on its way: look again when it is done. */
  #again = false;
  /** A ship is due shortly. */
  #scheduled = false;

  constructor(storage: DurableObjectStorage, env: Env) {
    this.#storage = storage;
    this.send = (team, entries, days) => env.TEAM_INDEX.getByName(team).appendAudit(team, entries, days);
  }

  /**
   * Writes the entry and logs it; the caller awaits the put before it answers (the output gate then holds the answer
   * until the write is durable). The entries waiting are shipped a moment later, beside the answers: calls that end
   * within SHIP_DELAY_MS of each other share one RPC.
   */
  record(team: string, days: number | undefined, entry: AuditEntry): Promise<void> {
    const kept: Outboxed = { team, days: days ?? AUDIT_DAYS.default, entry };
    const written = this.#storage.put(OUTBOX_PREFIX + entry.id, kept);
    log({ event: "audit", team, ...entry });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setTimeout(() => {
        this.#scheduled = false;
        void this.ship();
      }, SHIP_DELAY_MS);
    }
    return written;
  }

  /** Ships every entry waiting, batch after batch; a batch that fails stays for the next ship (logged, never thrown). */
  ship(): Promise<void> {
    if (this.#shipping) {
      this.#again = true;
      return this.#shipping;
    }
    const shipping = (async () => {
      try {
        do {
          this.#again = false;
          while (await this.#shipBatch());
        } while (this.#again);
      } catch (err) {
        log({ event: "unhandled", error: `audit entries not sent to the team index (kept, sent again later): ${reason(err)}` });
      } finally {
        this.#shipping = undefined;
      }
    })();
    this.#shipping = shipping;
    return shipping;
  }

  /** Sends the oldest batch waiting and deletes it once taken; true when there may be more. */
  async #shipBatch(): Promise<boolean> {
    const rows = await this.#storage.list({ prefix: OUTBOX_PREFIX, limit: AUDIT_BATCH });
    if (rows.size === 0) return false;
    const byTeam = new Map<string, { entries: AuditEntry[]; days: number }>();
    const unreadable: string[] = [];
    for (const [key, value] of rows) {
      const kept = accepted(Outboxed, value);
      if (!kept) {
        unreadable.push(key);
        continue;
      }
      const batch = byTeam.get(kept.team) ?? { entries: [], days: kept.days };
      batch.entries.push(kept.entry);
      batch.days = kept.days;
      byTeam.set(kept.team, batch);
    }
    // An entry that does not read back is no entry to send (a bug, or storage from another version): logged, dropped.
    if (unreadable.length > 0) log({ event: "misconfigured", reason: `${unreadable.length} unreadable audit outbox entries dropped` });
    for (const [team, batch] of byTeam) await withinDeadline(this.send(team, batch.entries, batch.days));
    // Unconfirmed: the answers served meanwhile need not wait for this write. Should it be lost, the entries go again,
    // and the trail takes them by id, so they count once.
    await this.#storage.delete([...rows.keys()], { allowUnconfirmed: true });
    return rows.size === AUDIT_BATCH;
  }

  /** True while some entry waits to be shipped. */
  async pending(): Promise<boolean> {
    return (await this.#storage.list({ prefix: OUTBOX_PREFIX, limit: 1 })).size > 0;
  }

  /** The entries still waiting (the session's end keeps them past its wipe). */
  async waiting(): Promise<Map<string, unknown>> {
    return this.#storage.list({ prefix: OUTBOX_PREFIX });
  }

  /** Puts back entries a wipe took (the session's end), to be shipped at the next alarm. */
  async keep(waiting: Map<string, unknown>): Promise<void> {
    const entries = [...waiting];
    for (let i = 0; i < entries.length; i += 128) await this.#storage.put(Object.fromEntries(entries.slice(i, i + 128)));
  }
}
