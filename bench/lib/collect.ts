// A full garbage collection for the benchmarks' heap figures, when the process can ask for one (`--expose-gc` set at
// run time); undefined where it cannot, and the figure is then left out.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export const collectGarbage: (() => void) | undefined = (() => {
  try {
    setFlagsFromString("--expose-gc");
    return runInNewContext("gc") as () => void;
  } catch {
    return undefined;
  }
})();
