// Pure: a search's answer when nothing searched is worth calling (search-usefulness.ts judged its hits weak). It says
// so first, so an agent does not call the best of them for want of anything better; then the servers nearest the
// query with the call that shows a server's tools, then the weak hits marked as weak, for an agent that knows better.
import { oneLine } from "./render.ts";

/** A server a nothing-useful answer names: loaded (its tools were searched) or not loaded yet (they were not). */
export interface ClosestServer {
  server: string;
  description: string;
  loaded: boolean;
}

/** At most this many servers are named, and this many weak hits shown in the text (all stay in the structured form). */
export const CLOSEST_SERVERS = 3;
export const WEAK_HITS_SHOWN = 3;

/**
 * The servers nearest a query nothing loaded answers: the lazy ones that match it first (their tools were not
 * searched, so one of them may well do it), then the servers of the weak hits in their order; at most
 * CLOSEST_SERVERS, each once.
 */
export function closestServers(
  hits: ReadonlyArray<{ server: string }>,
  lazy: ReadonlyArray<{ name: string; description: string }>,
  describe: (server: string) => string | undefined,
): ClosestServer[] {
  const out: ClosestServer[] = [];
  const add = (server: string, description: string | undefined, loaded: boolean) => {
    if (out.length < CLOSEST_SERVERS && !out.some((s) => s.server === server)) out.push({ server, description: oneLine(description), loaded });
  };
  for (const s of lazy) add(s.name, s.description, false);
  for (const h of hits) add(h.server, describe(h.server), true);
  return out;
}

/** How an answer names things: a view's word for a tool, a server's name as the view shows it, the calls that open one. */
export interface NothingUsefulWording {
  /** "tool" (discover_tool) or "API" (the code view). */
  thing: string;
  /** A server's name as the view shows it (the code view's namespace). */
  shown(server: string): string;
  /** The call that lists a loaded server's tools, with NAME where the server's name goes. */
  openLoaded: string;
  /** The call that loads a server not loaded yet (omitted when openLoaded loads it too). */
  openLazy?: string | undefined;
}

/** `No loaded tool does what "…" asks.`, the closest servers with the calls that open them, the weak hits. */
export function renderNothingUseful(
  query: string,
  closest: readonly ClosestServer[],
  weak: ReadonlyArray<{ name: string; description: string }>,
  wording: NothingUsefulWording,
): string {
  const line = (name: string, description: string) => (description ? `- ${name}: ${description}` : `- ${name}`);
  const parts = [`No loaded ${wording.thing} does what "${oneLine(query)}" asks.`];
  if (closest.length > 0) {
    const lazy = closest.some((s) => !s.loaded) && wording.openLazy !== undefined ? `; load one not loaded yet with ${wording.openLazy}` : "";
    parts.push(
      [
        `Closest servers (see a server's ${wording.thing}s with ${wording.openLoaded}${lazy}):`,
        ...closest.map((s) => line(s.loaded ? wording.shown(s.server) : `${wording.shown(s.server)} (not loaded)`, s.description)),
      ].join("\n"),
    );
  }
  if (weak.length > 0) {
    parts.push([`Weak matches, probably not what was asked:`, ...weak.slice(0, WEAK_HITS_SHOWN).map((h) => line(h.name, h.description))].join("\n"));
  }
  return parts.join("\n\n");
}
