// 64 MiB chunked POSTs (no Content-Length) to the OAuth routes anyone may reach, under `wrangler dev` with
// OAUTH_HOSTS=on: each is refused with a 4xx (or its connection closed) after the Worker read no more than the route's
// limit, so the workerd that runs the Worker grows by far less than the body. The body is made as it is sent, never
// held whole here; the Worker's resident memory is read from /proc (its peak reset before each request).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startWranglerDev, type Running } from "../../harness/processes.ts";
import { rssKiB, wranglerProcesses } from "../../bench/lib/proc.ts";

const MIB = 1024 * 1024;
const BODY_BYTES = 64 * MIB;
const TEAM = "bodies";
const DEV_PROXY_LOST = "Error: Network connection lost.";

let dir: string | undefined;
let proxy: Running | undefined;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "dynmcp-e2e-bodies-"));
  port = await freePort();
  proxy = await startWranglerDev({ persistTo: join(dir, "state"), vars: { SESSION_KEY: "e2e-session-key", OAUTH_HOSTS: "on" }, port });
});

afterAll(async () => {
  await proxy?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The peak resident memory of a process in KiB (VmHWM). */
const peakKiB = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);

/** Resets a process's peak to its current resident memory (Linux: `5` to clear_refs); false where that is refused. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

interface Sent {
  /** The answer's status, or undefined when the connection closed first (for the Worker: see DEV_PROXY_LOST). */
  status: number | undefined;
  /** Bytes of the body written when the answer (or the close) came. */
  sentBytes: number;
}

/** POSTs `BODY_BYTES` made chunk by chunk (chunked: no Content-Length), stopping once the proxy answers or closes. */
function chunkedPost(path: string, contentType: string): Promise<Sent> {
  const chunk = Buffer.alloc(64 * 1024, "a");
  let sentBytes = 0;
  let answered = false;
  const body = new Readable({
    read() {
      if (answered || sentBytes >= BODY_BYTES) return void this.push(null);
      sentBytes += chunk.length;
      this.push(chunk);
    },
  });
  return new Promise<Sent>((resolve) => {
    const done = (status: number | undefined) => {
      if (answered) return;
      answered = true;
      body.destroy();
      req.destroy();
      resolve({ status, sentBytes });
    };
    const req = httpRequest({ host: "127.0.0.1", port, path, method: "POST", headers: { "content-type": contentType } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (part: string) => (text += part.slice(0, 200)));
      // wrangler dev's proxy in front of the Worker answers a connection the Worker closed (it answered without
      // reading the rest of the body) with its own 500 and these words: the connection closed, as far as the Worker goes.
      res.on("end", () => done(res.statusCode === 500 && text.startsWith(DEV_PROXY_LOST) ? undefined : res.statusCode));
      res.on("error", () => done(undefined));
    });
    req.on("error", () => done(undefined));
    req.on("close", () => done(undefined));
    body.pipe(req);
  });
}

describe("unauthenticated bodies under wrangler dev", () => {
  it("refuses 64 MiB chunked POSTs to authorize, connect sign-in, token and register, the Worker growing by far less than 64 MiB", async () => {
    const form = "application/x-www-form-urlencoded";
    const routes = [
      { path: `/t/${TEAM}/oauth/authorize`, type: form },
      { path: `/t/${TEAM}/connect/github/sign-in`, type: form },
      { path: `/t/${TEAM}/oauth/token`, type: form },
      { path: `/t/${TEAM}/oauth/register`, type: "application/json" },
    ];
    // Each route once with a small body first, so the code it runs is loaded before anything is measured.
    for (const route of routes) {
      const res = await fetch(`http://127.0.0.1:${port}${route.path}`, { method: "POST", headers: { "content-type": route.type }, body: "x=1" });
      expect(res.status, route.path).toBeGreaterThanOrEqual(400);
      await res.body?.cancel();
    }
    const worker = wranglerProcesses(proxy!.child.pid, port).worker;
    expect(worker, "the workerd that runs the Worker").toBeDefined();
    for (const route of routes) {
      const before = rssKiB(worker!);
      const reset = resetPeak(worker!);
      const peakBefore = peakKiB(worker!);
      const sent = await chunkedPost(route.path, route.type);
      // Where the peak cannot be reset, the one from before is the floor: the growth is then overstated, never hidden.
      const grewKiB = peakKiB(worker!) - (reset ? before : Math.min(before, peakBefore));
      const what = `${route.path}: answered ${sent.status ?? "by closing"} after ${(sent.sentBytes / MIB).toFixed(1)} MiB sent; the Worker's peak grew ${(grewKiB / 1024).toFixed(1)} MiB`;
      // Soft: every route is tried and measured, whichever fails.
      if (sent.status !== undefined) {
        expect.soft(sent.status, what).toBeGreaterThanOrEqual(400);
        expect.soft(sent.status, what).toBeLessThan(500);
      }
      expect.soft(sent.sentBytes, what).toBeLessThan(BODY_BYTES);
      expect.soft(grewKiB, what).toBeLessThan(64 * 1024);
    }
  });
});
