// Bench-only Worker entry (bench/audit-dev.ts serves it in place of src/index.ts, from its snapshot of src/): the
// proxy exactly as built, except that the session objects of the teams named in the var BENCH_AUDIT_PARTS
// (`<team>=<kept>,…`) keep only part of the audit's work for a call, so that the benchmark can take it apart:
//   "nothing"   no entry at all (no put, no log line, nothing shipped): the baseline;
//   "put"       the entry's put into the object's storage that the answer waits for, nothing else;
//   "put+log"   the outbox's own record (the put and the `audit` log line), never shipped to the team's trail.
// Every other team is audited as in production. So one `wrangler dev` serves the audited call path and the same path
// without (some of) its audit side by side. Never deployed; no production code reads the var. Type-checked with the
// Worker project (tsconfig.json), not the Node one.
import type { Env } from "../../src/lib/env.ts";
import { SessionObject as AuditedSessionObject } from "../../src/session/object.ts";

export { default, TeamIndex } from "../../src/index.ts";

type Kept = "nothing" | "put" | "put+log";

export class SessionObject extends AuditedSessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const named = (env as Env & { BENCH_AUDIT_PARTS?: string }).BENCH_AUDIT_PARTS ?? "";
    const parts = new Map(named.split(",").map((pair) => pair.split("=") as [string, Kept]));
    const outbox = this.audit;
    const record = outbox.record.bind(outbox);
    // Every side pays the same look-up; an object's calls are all of one team.
    outbox.record = (team, days, entry) => {
      const kept = parts.get(team);
      if (kept === undefined) return record(team, days, entry);
      if (kept === "nothing") return Promise.resolve();
      outbox.ship = () => Promise.resolve();
      // The put as the outbox makes it (its key and value), without the log line.
      return kept === "put" ? ctx.storage.put(`audit:${entry.id}`, { team, days: days ?? 30, entry }) : record(team, days, entry);
    };
  }
}
