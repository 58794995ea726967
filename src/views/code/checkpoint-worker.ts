// The entry of the checkpoint finder's Dynamic Worker (not part of the Worker's bundle): scripts/build-checkpoints.ts
// bundles it with src/views/code/checkpoints.ts and acorn into assets/sandbox/checkpoints.js, which src/views/code/instrument.ts
// loads once per isolate through the Worker Loader, with no bindings and no network. One method: `find`.
import { WorkerEntrypoint } from "cloudflare:workers";
import { findCheckpoints, type CheckpointAnswer } from "./checkpoints.ts";

export default class CheckpointFinder extends WorkerEntrypoint {
  find(source: unknown): CheckpointAnswer {
    if (typeof source !== "string") return { ok: false, reason: "not a module's source" };
    return findCheckpoints(source);
  }
}
