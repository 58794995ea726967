// The end of a benchmark run through `wrangler dev`: whatever it started is stopped and its scratch folder removed.
import { rmSync } from "node:fs";
import type { Running } from "../../harness/processes.ts";
import type { ProxySnapshot } from "../floor/proxy-snapshot.ts";

/** Stops the proxy, removes its snapshot, closes the replay upstreams and removes the folder (any may be missing). */
export async function teardown(parts: { proxy?: Running | undefined; snapshot?: ProxySnapshot | undefined; replay?: { close(): Promise<void> }; dir: string }): Promise<void> {
  await parts.proxy?.stop();
  parts.snapshot?.remove();
  await parts.replay?.close();
  rmSync(parts.dir, { recursive: true, force: true });
}
