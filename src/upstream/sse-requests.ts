// The requests an upstream sends on one SSE answer stream, read as the stream's bytes pass on their way to the SDK.
// Which stream a server-to-client request came on says which call it belongs to, and only the fetch under the SDK
// sees streams: the SDK hands its client every message alike. Events are framed as the SSE format frames them
// (lines end in LF, CR or CRLF; a blank line ends an event; `data` lines are joined by LF; only `message` events
// carry JSON-RPC), and each event's data is read as one JSON-RPC message or a batch of them.

/** A JSON-RPC request's id, which its answer carries back. */
export type RequestId = string | number;

const LINE_END = /\r\n|\r|\n/g;
/** Only data that names a method at all is parsed: an answer's text holds `"method"` only as escaped `\"method\"`. */
const NAMES_A_METHOD = /"method"\s*:/;

/**
 * Calls `found` with the id of every JSON-RPC request on the stream, in order; returns what each chunk of the
 * stream's bytes is handed to. A chunk may end anywhere, even inside a character or between CR and LF.
 */
export function requestsIn(found: (id: RequestId) => void): (chunk: Uint8Array) => void {
  const decoder = new TextDecoder();
  /** Text not yet split into lines (none of it a line end). */
  let pending = "";
  /** The last chunk ended in CR: an LF that begins the next one is the second half of that CRLF. */
  let afterCR = false;
  let data: string[] = [];
  let type = "";

  const dispatch = () => {
    const text = data.join("\n");
    const message = type === "" || type === "message";
    data = [];
    type = "";
    if (!message || !NAMES_A_METHOD.test(text)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return; // the SDK reports a message it cannot read; nothing to note here
    }
    for (const one of Array.isArray(parsed) ? parsed : [parsed]) {
      const { method, id } = (one ?? {}) as { method?: unknown; id?: unknown };
      if (typeof method === "string" && (typeof id === "string" || typeof id === "number")) found(id);
    }
  };

  const line = (text: string) => {
    if (text === "") return dispatch();
    if (text.startsWith(":")) return; // a comment (keep-alives)
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    const raw = colon < 0 ? "" : text.slice(colon + 1);
    const value = raw.startsWith(" ") ? raw.slice(1) : raw;
    if (field === "data") data.push(value);
    else if (field === "event") type = value;
  };

  return (chunk) => {
    let text = decoder.decode(chunk, { stream: true });
    if (text === "") return; // only part of a character so far
    if (afterCR && text.startsWith("\n")) text = text.slice(1);
    afterCR = text.endsWith("\r");
    const from = pending.length;
    pending += text;
    let start = 0;
    LINE_END.lastIndex = from;
    for (let end = LINE_END.exec(pending); end; end = LINE_END.exec(pending)) {
      line(pending.slice(start, end.index));
      start = end.index + end[0].length;
    }
    pending = pending.slice(start);
  };
}
