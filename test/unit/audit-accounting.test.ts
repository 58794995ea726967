// bench/lib/audit-accounting.ts's pairing of calls and audit entries (by traceparent): what bench/audit-dev.ts reports
// as missing, duplicates and strays must be counted so, or its "0 missing" would prove nothing.
import { describe, expect, it } from "vitest";
import { account, newTraceparent } from "../../bench/lib/audit-accounting.ts";

const entry = (traceparent: string | undefined, outcome = "ok", id = newTraceparent().slice(3, 12)) => ({
  id,
  kind: "tool_call",
  tool: "everything/echo",
  outcome,
  ...(traceparent ? { traceparent } : {}),
});

describe("account", () => {
  const [a, b, c] = [newTraceparent(), newTraceparent(), newTraceparent()];

  it("finds every answered call's one entry", () => {
    expect(account(new Set([a, b]), [entry(b), entry(a)])).toEqual({ found: 2, missing: 0, duplicates: 0, strays: 0, notOk: 0 });
  });

  it("counts an answered call without an entry as missing", () => {
    expect(account(new Set([a, b, c]), [entry(a)])).toMatchObject({ found: 1, missing: 2 });
  });

  it("counts a call with two entries once, as a duplicate", () => {
    expect(account(new Set([a, b]), [entry(a), entry(a), entry(b)])).toMatchObject({ found: 2, missing: 0, duplicates: 1 });
  });

  it("counts entries of no answered call, or without a traceparent, as strays; an entry not ok as such", () => {
    expect(account(new Set([a]), [entry(a, "timeout"), entry(c), entry(undefined)])).toMatchObject({ found: 1, strays: 2, notOk: 1 });
  });

  it("makes well-formed traceparents, each its own", () => {
    const made = new Set(Array.from({ length: 100 }, newTraceparent));
    expect(made.size).toBe(100);
    for (const t of made) expect(t).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });
});
