// A client's name (RFC 7591 `client_name`, or a metadata document's) is the client's own words, shown to a member who
// is about to trust it. Escaping HTML keeps it from adding markup, not from rearranging or hiding text: a right-to-left
// override (U+202E) makes what follows it read backwards, so "Evil \u202Eedualc" shows as "Evil claude", and
// zero-width or other format characters make two different names look alike. Such characters are refused when a
// client registers, and removed, with a warning, wherever a name is shown (a metadata document's name, or a client
// registered before this rule, never passed registration).
import type { ClientRegistrationCallbackOptions, ClientRegistrationCallbackResult } from "@cloudflare/workers-oauth-provider";

/**
 * Controls, format characters (bidirectional embeddings, overrides, isolates and marks, zero-width characters,
 * invisible operators, tags) and the line and paragraph separators: none has a place in a name.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
const ALL_HIDDEN = new RegExp(HIDDEN.source, "gu");
/** A name longer than this is cut (it is a name, not a paragraph that pushes the rest of the page away). */
const MAX_SHOWN = 100;

export interface ShownName {
  text: string;
  /** Hidden characters were removed: the page says so. */
  altered: boolean;
}

/** The name as a page shows it: hidden characters gone, whitespace folded, at most 100 characters; else `fallback`. */
export function shownClientName(name: string, fallback: string): ShownName {
  const visible = name.replace(ALL_HIDDEN, "");
  const folded = visible.replace(/\s+/g, " ").trim();
  const text = folded.length > MAX_SHOWN ? `${folded.slice(0, MAX_SHOWN - 1)}…` : folded;
  return { text: text || fallback.replace(ALL_HIDDEN, ""), altered: visible !== name };
}

/** Dynamic registration refuses a `client_name` (or a localized `client_name#…`) with hidden characters in it. */
export function refuseHiddenClientName({ clientMetadata }: ClientRegistrationCallbackOptions): ClientRegistrationCallbackResult | undefined {
  const hidden = Object.entries(clientMetadata).find(
    ([field, value]) => (field === "client_name" || field.startsWith("client_name#")) && typeof value === "string" && HIDDEN.test(value),
  );
  if (!hidden) return undefined;
  return {
    code: "invalid_client_metadata",
    description: `${hidden[0]} holds control or invisible formatting characters (such as bidirectional overrides), which could disguise the name`,
  };
}
