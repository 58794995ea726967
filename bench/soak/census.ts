// What the proxy keeps, read from `--persist-to`: the rows of its Durable Objects and its KV entries (with
// node:sqlite), the bytes of the folder by owner, and the wait after the run until nothing is kept.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { ms } from "../lib/results.ts";
import { now, short, sleep } from "./clock.ts";
import { WORKER_NAME, type SoakOptions } from "./options.ts";

export interface FolderSize {
  bytes: number;
  /** The proxy's own state: Durable Objects (sessions, and any other class of the Worker) and KV. */
  proxyBytes: number;
  /** SQLite files of session objects (one per object that ever stored something). */
  objectFiles: number;
}

/**
 * Bytes under --persist-to, by owner. Besides the Worker's Durable Objects (`v3/do/<worker>-<class>`) and KV
 * (`v3/kv`), wrangler's local emulation keeps stores of its own there (observability traces, the rate limiter's
 * object, …) that have no counterpart in the proxy's deployed storage; they count in the total only.
 */
export function folderSize(dir: string): FolderSize {
  const out: FolderSize = { bytes: 0, proxyBytes: 0, objectFiles: 0 };
  const walk = (path: string, rel: string, depth: number) => {
    if (depth > 12) return;
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(path, entry.name);
      const relative = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(full, relative, depth + 1);
      else if (entry.isFile()) {
        let size = 0;
        try {
          size = statSync(full).size;
        } catch {
          continue; // gone between listing and stat (a WAL file checkpointed away)
        }
        out.bytes += size;
        const session = relative.startsWith("v3/do/") && relative.includes("-SessionObject/");
        if (relative.startsWith(`v3/do/${WORKER_NAME}-`) || relative.startsWith("v3/kv/")) out.proxyBytes += size;
        if (session && entry.name.endsWith(".sqlite") && entry.name !== "metadata.sqlite") out.objectFiles++;
      }
    }
  };
  walk(dir, "", 0);
  return out;
}

export interface ObjectCensus {
  /** Objects of the class with a SQLite file. */
  files: number;
  /** Objects that still hold rows (for sessions: one not ended yet, by DELETE or its time-to-live). */
  holdingData: number;
  unreadable: number;
  /** Rows in all the class's objects, and the bytes of their keys and values: what the proxy keeps. */
  rows: number;
  dataBytes: number;
  /**
   * File bytes (WAL and shared-memory files included) of the objects whose storage was wiped: workerd keeps an
   * empty file (the deployed runtime keeps nothing).
   */
  bytesEmpty: number;
  /** Rows of the fullest object. */
  maxRows: number;
  /**
   * Rows kept on purpose and bounded, left out of `rows`: the team index's usage days (`usage:<day>` and each
   * principal's share, `usage-by:<day>:<principal>`, 90 days at most, src/team/team-index.ts). Only the rows above
   * say whether anything was left behind.
   */
  keptRows: number;
}

export interface KeptSample {
  /** s since the run started. */
  t: number;
  sessions: ObjectCensus;
  /** The per-team index of live sessions (admin reloads and reconnects find them there). */
  teamIndex: ObjectCensus;
  /** Team configs, token hashes, catalog cache. */
  kv: { entries: number; dataBytes: number };
  /** Bytes of keys and values in all of the above. */
  dataBytes: number;
}

type Sqlite = typeof import("node:sqlite");
let sqlite: Promise<Sqlite> | undefined;

/** node:sqlite, loaded once; it is experimental in Node 22, so its one-time warning is kept out of the output. */
function loadSqlite(): Promise<Sqlite> {
  if (!sqlite) {
    const listeners = process.listeners("warning");
    process.removeAllListeners("warning");
    process.on("warning", (w) => {
      if (w.name !== "ExperimentalWarning") for (const l of listeners) l(w);
    });
    sqlite = import("node:sqlite");
  }
  return sqlite;
}

/** Bytes of a SQLite file with its WAL and shared-memory files, and when any of them last changed. */
function sqliteFileState(file: string): { bytes: number; mtimeMs: number } {
  let bytes = 0;
  let mtimeMs = 0;
  for (const suffix of ["", "-wal", "-shm"]) {
    try {
      const st = statSync(file + suffix);
      bytes += st.size;
      mtimeMs = Math.max(mtimeMs, st.mtimeMs);
    } catch {
      // no WAL or shared-memory file
    }
  }
  return { bytes, mtimeMs };
}

interface ObjectRows {
  mtimeMs: number;
  rows: number;
  dataBytes: number;
  kept: number;
}

/** Keys kept on purpose (and bounded), per class: not counted as left behind. */
/** Both usage keys start so (`usage:` and `usage-by:`), and no other key of the index does. */
const KEPT_PREFIX: Record<string, string | undefined> = { TeamIndex: "usage" };

/**
 * Per object file: its rows and data bytes when last read, so an unchanged file is not opened again. A file that
 * could not be read (being created, say) is not remembered: it is read again next time.
 */
const objectCache = new Map<string, ObjectRows>();

/** The rows of one object's SQLite file (workerd keeps them in `_cf_KV`), from the cache while the file is unchanged. */
function objectRows(DatabaseSync: Sqlite["DatabaseSync"], file: string, mtimeMs: number, keptPrefix: string | undefined): ObjectRows | undefined {
  let entry = objectCache.get(file);
  if (entry !== undefined && entry.mtimeMs === mtimeMs) return entry;
  try {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_cf_KV'").get();
      // Rows under the kept prefix are counted apart (`substr` on the key's text: no pattern characters to escape).
      const kept = keptPrefix === undefined ? "0" : `coalesce(sum(substr(CAST(key AS TEXT), 1, ${keptPrefix.length}) = '${keptPrefix}'), 0)`;
      const row = table
        ? (db.prepare(`SELECT count(*) AS n, coalesce(sum(length(key) + length(value)), 0) AS b, ${kept} AS k FROM _cf_KV`).get() as { n: number; b: number; k: number })
        : { n: 0, b: 0, k: 0 };
      entry = { mtimeMs, rows: Number(row.n) - Number(row.k), dataBytes: Number(row.b), kept: Number(row.k) };
    } finally {
      db.close();
    }
  } catch {
    entry = undefined;
  }
  if (entry) objectCache.set(file, entry);
  else objectCache.delete(file);
  return entry;
}

/**
 * Opens each object's SQLite file of one Durable Object class read-only and counts the rows and the bytes of their
 * keys and values. Counting rows, not file sizes, is what tells the proxy's storage from the local runtime's:
 * workerd keeps a file for every object that ever stored anything, even after deleteAll().
 */
async function censusOfObjects(state: string, className: string): Promise<ObjectCensus> {
  const out: ObjectCensus = { files: 0, holdingData: 0, unreadable: 0, rows: 0, dataBytes: 0, bytesEmpty: 0, maxRows: 0, keptRows: 0 };
  const dir = join(state, "v3", "do", `${WORKER_NAME}-${className}`);
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  } catch {
    return out;
  }
  const { DatabaseSync } = await loadSqlite();
  for (const name of names.slice(0, 100_000)) {
    const file = join(dir, name);
    const { bytes, mtimeMs } = sqliteFileState(file);
    out.files++;
    const entry = objectRows(DatabaseSync, file, mtimeMs, KEPT_PREFIX[className]);
    if (entry === undefined) {
      out.unreadable++;
    } else if (entry.rows > 0) {
      out.keptRows += entry.kept;
      out.holdingData++;
      out.rows += entry.rows;
      out.dataBytes += entry.dataBytes;
      out.maxRows = Math.max(out.maxRows, entry.rows);
    } else {
      out.keptRows += entry.kept;
      if (entry.kept === 0) out.bytesEmpty += bytes;
    }
  }
  return out;
}

/** KV entries (wrangler keeps them in a SQLite index plus one blob file per value) and their bytes. */
async function censusOfKv(state: string): Promise<KeptSample["kv"]> {
  const out = { entries: 0, dataBytes: 0 };
  const index = join(state, "v3", "kv", "miniflare-KVNamespaceObject");
  let names: string[];
  try {
    names = readdirSync(index).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  } catch {
    return out;
  }
  const blobDirs = readdirSync(join(state, "v3", "kv"))
    .filter((d) => d !== "miniflare-KVNamespaceObject")
    .map((d) => join(state, "v3", "kv", d, "blobs"));
  const { DatabaseSync } = await loadSqlite();
  for (const name of names) {
    try {
      const db = new DatabaseSync(join(index, name), { readOnly: true });
      try {
        const rows = db.prepare("SELECT key, blob_id FROM _mf_entries").all() as Array<{ key: string; blob_id: string }>;
        for (const row of rows) {
          out.entries++;
          out.dataBytes += Buffer.byteLength(row.key) + blobSize(blobDirs, row.blob_id);
        }
      } finally {
        db.close();
      }
    } catch {
      // a namespace being written to: counted next time
    }
  }
  return out;
}

/** The size of a KV value's blob, from the first namespace folder that has it (0 when none does). */
function blobSize(blobDirs: string[], blobId: string): number {
  for (const dir of blobDirs) {
    try {
      return statSync(join(dir, blobId)).size;
    } catch {
      // not in this namespace's folder
    }
  }
  return 0;
}

/** What the proxy keeps: rows of its Durable Objects and its KV entries. */
export async function keptData(state: string, t: number): Promise<KeptSample> {
  const [sessions, teamIndex, kv] = [await censusOfObjects(state, "SessionObject"), await censusOfObjects(state, "TeamIndex"), await censusOfKv(state)];
  return { t, sessions, teamIndex, kv, dataBytes: sessions.dataBytes + teamIndex.dataBytes + kv.dataBytes };
}

/**
 * Nothing kept: no session object and no team-index entry holds anything, and every object file could be read (an
 * unreadable one proves nothing; an index that was never written proves nothing either).
 */
export function nothingKept(k: KeptSample): boolean {
  return k.sessions.holdingData === 0 && k.teamIndex.rows === 0 && k.sessions.unreadable === 0 && k.teamIndex.unreadable === 0 && k.teamIndex.files > 0;
}

/** The wait after the run: the last count, how long it waited (s) and, when nothing was kept by then, after how long. */
export interface AfterWait {
  afterWait: KeptSample;
  waitedS: number;
  settledAfterS: number | undefined;
}

/**
 * Waits on the condition, not a clock: from one time-to-live after the last session, counts again every
 * `waitPollMs` until nothing is kept or the deadline passes. Every count is added to `kept`.
 */
export async function countUntilNothingKept(o: SoakOptions, state: string, kept: KeptSample[]): Promise<AfterWait> {
  const waitStart = now();
  await sleep(o.waitMinMs);
  let afterWait: KeptSample | undefined;
  for (let round = 0; round < 100_000; round++) {
    const counted = await keptData(state, now() / 1000).catch((err: unknown) => {
      console.error(`soak: counting what the proxy keeps failed: ${short(err)}`);
      return undefined;
    });
    if (counted) {
      kept.push(counted);
      afterWait = counted;
      if (nothingKept(counted)) break;
    }
    if (now() - waitStart >= o.waitDeadlineMs) break;
    await sleep(Math.min(o.waitPollMs, Math.max(0, waitStart + o.waitDeadlineMs - now())));
  }
  if (!afterWait) throw new Error("what the proxy keeps could not be counted after the run");
  const waitedS = Math.round((now() - waitStart) / 100) / 10;
  const settledAfterS = nothingKept(afterWait) ? waitedS : undefined;
  console.log(
    settledAfterS !== undefined
      ? `soak: nothing kept ${ms(settledAfterS, 1)} s after the last session (time-to-live ${o.sessionTtlS} s)`
      : `soak: ${afterWait.sessions.holdingData} session objects still held data ${ms(waitedS, 1)} s after the last session ` +
          `(time-to-live ${o.sessionTtlS} s, deadline ${o.waitDeadlineMs / 1000} s)`,
  );
  return { afterWait, waitedS, settledAfterS };
}
