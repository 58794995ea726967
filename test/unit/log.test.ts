// Log lines: one JSON line per event; a session's per-call lines are written after the answer, in order.
import { afterEach, describe, expect, it, vi } from "vitest";
import { log } from "../../src/lib/log.ts";

const events = (calls: unknown[][]) => calls.map((c) => (JSON.parse(String(c[0])) as { event: string }).event);

describe("log", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("writes tool-call and load lines on the next turn, and any other line after those still waiting", () => {
    vi.useFakeTimers();
    const out = vi.spyOn(console, "log").mockImplementation(() => {});
    const err = vi.spyOn(console, "error").mockImplementation(() => {});
    const call = { team: "t", session: "s", principal: "t:0123456789abcdef", upstream: "u", ms: 1 };
    log({ event: "tool_call", ...call, tool: "x", outcome: "ok" });
    log({ event: "load_mcp", ...call, outcome: "ok" });
    expect(out).not.toHaveBeenCalled();
    vi.runAllTimers();
    expect(events(out.mock.calls)).toEqual(["tool_call", "load_mcp"]);

    log({ event: "tool_call", ...call, tool: "y", outcome: "failed" });
    log({ event: "admin", action: "config.put", team: "t", outcome: "ok" });
    expect(events(out.mock.calls)).toEqual(["tool_call", "load_mcp", "tool_call", "admin"]);
    log({ event: "tool_call", ...call, tool: "z", outcome: "ok" });
    log({ event: "unhandled", error: "Error" });
    expect(events(out.mock.calls)).toEqual(["tool_call", "load_mcp", "tool_call", "admin", "tool_call"]);
    expect(events(err.mock.calls)).toEqual(["unhandled"]);
    vi.runAllTimers();
    expect(out).toHaveBeenCalledTimes(5);
  });
});
