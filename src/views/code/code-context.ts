// What the code view's parts (search, describe, execute) share for a session's life: the session, its code names, the
// lazy loads, what the deployment lends (the sandbox and its limits) and what the session lends (paused runs).
import type { ToolNames } from "../find-tool.ts";
import type { LazyLoads } from "../lazy-loads.ts";
import type { ViewSession } from "../tool-view.ts";
import type { PausedRuns } from "./consent.ts";
import type { CodeNames } from "./names.ts";
import type { SandboxLimits } from "./run-state.ts";
import type { Sandbox } from "./sandbox.ts";

/** What the code view needs of the deployment: the loader of sandboxes, their checkpoint finder, the limits of one run. */
export interface CodeRuntime extends Sandbox {
  limits: SandboxLimits;
}

/** What the session lends the code view besides its parts: where paused programs wait. */
export interface CodeSessionParts {
  /** Where programs paused for the user's consent wait (the session's storage). */
  paused: PausedRuns;
}

/** One code view's shared state, built once per registry. */
export interface CodeContext {
  session: ViewSession;
  names: CodeNames;
  /** The names a program's calls and describe's paths resolve by. */
  naming: ToolNames;
  lazy: LazyLoads;
}

/** The namespaces, for answers that need to name them. */
export const namespaceList = (names: CodeNames): string => names.namespaces().join(", ") || "none";
