// A catalog's search index stored in its catalog cache entry (catalog-cache.ts), as the bytes of
// search-index-bytes.ts in base64url: written with the catalog, so an isolate that has no kept index for it takes
// the stored one (about a sixth of a build's time) instead of building it at its first search; read with the catalog
// itself (no read more: a team of 949 upstreams already reads 949 entries). The index is of the catalog as the team's
// filters and safe text show it to a caller who sees every tool, the common case; a caller whose policies hide tools
// has another key and builds its own. Never trusted: another version, a wrong shape, a key that is not the one of
// the catalog as read now, or tools other than the catalog's, and it is ignored (the search builds the index).
import * as z from "zod";
import type { UpstreamCatalog } from "../catalog/catalog.ts";
import { handOnDigests } from "../catalog/catalog-digest.ts";
import { catalogIndexKey, catalogInputs, showsCatalog, type ShownAs } from "../catalog/catalog-index.ts";
import { readToolIndex, toolIndexBytes } from "../catalog/search-index-bytes.ts";
import { adoptIndex, keptUnder, sharedIndex } from "../catalog/shared-indexes.ts";
import type { ConfigMode, UpstreamSpec } from "../config/validate.ts";
import { base64url, fromBase64url } from "../lib/bytes.ts";
import { applyToolPolicy } from "../upstream/policy.ts";

/** The stored form: the index's key (`catalogIndexKey`) and its bytes. */
export const StoredIndex = z.object({ key: z.string(), bytes: z.string() });
export type StoredIndex = z.output<typeof StoredIndex>;

/** What an index stored with `catalog` is of: the catalog as the team's filters and safe text show it, and its key. */
function shownFor(spec: UpstreamSpec, catalog: UpstreamCatalog, mode: ConfigMode): { as: ShownAs; tools: UpstreamCatalog["tools"]; key: string } {
  const as: ShownAs = { mode, server: spec.name, description: spec.description };
  const { tools } = handOnDigests(catalog, applyToolPolicy(spec, catalog));
  return { as, tools, key: catalogIndexKey(as, tools) };
}

/**
 * The index to store with `catalog`: `previous` when it is of the same key, else the isolate's (built now if it has
 * none, and kept: the writer's own sessions search it next).
 */
export function indexToStore(spec: UpstreamSpec, catalog: UpstreamCatalog, mode: ConfigMode, previous: StoredIndex | undefined): StoredIndex {
  const { as, tools, key } = shownFor(spec, catalog, mode);
  if (previous?.key === key) return previous;
  const { index } = sharedIndex(key, () => catalogInputs(as, tools), (i) => showsCatalog(i, as, tools));
  return { key, bytes: base64url(toolIndexBytes(index)) };
}

/** What became of a stored index: taken, not needed (one is kept already), or refused (built at the search instead). */
export type StoredIndexOutcome = "loaded" | "kept" | "refused";

/** Takes the index stored with `catalog` into the isolate's shared indexes, if none is kept for it and it holds up. */
export function loadStoredIndex(spec: UpstreamSpec, catalog: UpstreamCatalog, mode: ConfigMode, stored: StoredIndex): StoredIndexOutcome {
  const { as, tools, key } = shownFor(spec, catalog, mode);
  if (keptUnder(key)) return "kept";
  if (stored.key !== key) return "refused";
  let bytes: Uint8Array;
  try {
    bytes = fromBase64url(stored.bytes);
  } catch {
    return "refused";
  }
  const index = readToolIndex(bytes);
  return index && adoptIndex(key, index, (i) => showsCatalog(i, as, tools)) ? "loaded" : "refused";
}
