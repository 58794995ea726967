// The one form of the config's tool-name globs (per-server `tools`, `approve`, `policies`) and their one matcher:
// picomatch with its defaults, so `*` and `?` never cross `/` and `**` alone matches across it. Every place that
// reads such a glob matches through here, so a glob means the same thing in every key of the config.
import picomatch from "picomatch";
import * as z from "zod";

/** One glob over a tool's name (`server/tool` in config-file mode, the bare name in single-MCP mode). */
export const ToolGlob = z.string().min(1).max(200);

/** A list of globs as every key of the config takes them. */
export const ToolGlobs = z.array(ToolGlob).max(500);

/** Whether a name matches any of the globs, compiled once: keep the function where it is used more than once. */
export function toolGlobMatcher(globs: readonly string[]): (name: string) => boolean {
  if (globs.length === 0) return () => false;
  return picomatch([...globs]);
}
