// Which upstream a relayed request comes from, said to the host and to the person a question reaches. Every request an
// upstream sends the host (elicitation, sampling, roots; in a 2025 session or as a 2026 `input_required`) carries
// the server's configured name under `_meta["dynmcp/server"]`, whatever the upstream put there, and a question's
// words begin with that name in brackets: an elicitation's `message`, a sampling request's `systemPrompt`. The
// proxy's own questions (code mode's consent, connecting an account) carry neither, so an upstream cannot word a
// question so that it reads as the proxy's.

/** The `_meta` key naming the server a relayed request comes from. */
export const SERVER_META_KEY = "dynmcp/server";

/** How a relayed question's words begin: `[<server>] `. Configured names are letters, digits, `_` and `-`. */
export const askedBy = (upstream: string): string => `[${upstream}] `;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A request of `upstream`'s as the host gets it: named in `_meta`, its question's words prefixed. */
export function markedAsFrom<R extends { method: string; params?: Record<string, unknown> | undefined }>(upstream: string, request: R): R {
  const params: Record<string, unknown> = { ...request.params };
  params["_meta"] = { ...(isRecord(params["_meta"]) ? params["_meta"] : {}), [SERVER_META_KEY]: upstream };
  const prefixed = (words: unknown) => (typeof words === "string" && words !== "" ? askedBy(upstream) + words : askedBy(upstream).trimEnd());
  if (request.method === "elicitation/create") params["message"] = prefixed(params["message"]);
  // The system prompt frames the whole request, for the person who reviews it and for the model alike.
  else if (request.method === "sampling/createMessage") params["systemPrompt"] = prefixed(params["systemPrompt"]);
  return { ...request, params };
}
