// Bench-only Worker entry (bench/audit-dev.ts serves it in place of src/index.ts, from its snapshot of src/): the
// proxy exactly as built, except that the session objects of ONE team, named by the var BENCH_UNAUDITED_TEAM, record
// no audit entry (no put, no log line, nothing to ship). Every other team is audited as in production. So one
// `wrangler dev` serves the audited call path and the same path without its audit side by side, and the benchmark
// alternates between them to measure what the audit adds to a call. Never deployed; no production code reads the var.
// Type-checked with the Worker project (tsconfig.json), not the Node one.
import type { Env } from "../../src/lib/env.ts";
import { SessionObject as AuditedSessionObject } from "../../src/session/object.ts";

export { default, TeamIndex } from "../../src/index.ts";

export class SessionObject extends AuditedSessionObject {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const unaudited = (env as Env & { BENCH_UNAUDITED_TEAM?: string }).BENCH_UNAUDITED_TEAM;
    if (!unaudited) return;
    const outbox = this.audit;
    const record = outbox.record.bind(outbox);
    // The same branch on both sides: an audited call pays this comparison too.
    outbox.record = (team, days, entry) => (team === unaudited ? Promise.resolve() : record(team, days, entry));
  }
}
