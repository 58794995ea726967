// Reading the requests an upstream sends on an SSE answer stream as its bytes pass (src/upstream/sse-requests.ts):
// however the bytes are cut into chunks, every request is found once, and nothing else is taken for one.
import { describe, expect, it } from "vitest";
import { requestsIn, type RequestId } from "../../src/upstream/sse-requests.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** The ids found when `text` arrives cut after each of `cuts` (byte offsets). */
function found(text: string, cuts: number[] = []): RequestId[] {
  const ids: RequestId[] = [];
  const read = requestsIn((id) => ids.push(id));
  const all = bytes(text);
  let at = 0;
  for (const cut of [...cuts, all.length]) {
    read(all.slice(at, cut));
    at = cut;
  }
  return ids;
}

const event = (message: unknown, eol = "\n") => `event: message${eol}id: e1${eol}data: ${JSON.stringify(message)}${eol}${eol}`;
const elicit = { jsonrpc: "2.0", id: 7, method: "elicitation/create", params: { message: "Run ünïcode?", requestedSchema: { type: "object" } } };
const answer = { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: 'a "method": inside text' }], structuredContent: { method: "GET" } } };

describe("the requests on an SSE answer stream", () => {
  it("finds a request between notifications and before the answer, and nothing in the answer or a notification", () => {
    const stream = event({ jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } }) + event(elicit) + ": keep-alive\n\n" + event(answer);
    expect(found(stream)).toEqual([7]);
  });

  it("finds it whatever the chunks: cut at every byte, with LF, CRLF and CR line ends", () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const stream = event({ jsonrpc: "2.0", id: "s-1", method: "sampling/createMessage", params: {} }, eol) + event(elicit, eol);
      const length = bytes(stream).length;
      for (let cut = 0; cut <= length; cut++) expect(found(stream, [cut]), `${JSON.stringify(eol)} cut at ${cut}`).toEqual(["s-1", 7]);
      // Every byte its own chunk: multi-byte characters and CRLF pairs split too.
      expect(found(stream, Array.from({ length }, (_, i) => i))).toEqual(["s-1", 7]);
    }
  });

  it("joins data lines, reads batches, and ignores other event types and data that is not JSON", () => {
    const json = JSON.stringify(elicit);
    // Cut between two tokens: joined by a line feed, the message is still JSON.
    const cut = json.indexOf('"id"');
    const split = `data: ${json.slice(0, cut)}\ndata:${json.slice(cut)}\n\n`;
    expect(JSON.parse(`${json.slice(0, cut)}\n${json.slice(cut)}`)).toEqual(elicit);
    expect(found(split)).toEqual([7]);
    expect(found(`data: ${JSON.stringify([elicit, { ...elicit, id: 8 }])}\n\n`)).toEqual([7, 8]);
    expect(found(`event: ping\ndata: ${json}\n\n`)).toEqual([]);
    expect(found(`data: {"method": broken\n\n`)).toEqual([]);
    // An event the stream never finishes is not a request yet.
    expect(found(`data: ${json}\n`)).toEqual([]);
  });
});
