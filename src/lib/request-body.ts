// The one way the Worker reads a request's body: whole, up to a byte limit counted on the bytes as they stream in.
// A Content-Length over the limit is refused before anything is read; a body without one (chunked), or one longer than
// its header says, is cut off at the limit and the rest never pulled, so a caller cannot make the isolate buffer more
// than the route's limit whatever the headers say.

/** MAX_BODY_BYTES's default (src/lib/settings.ts), kept here too for the latency benchmark's floor Worker, which reads
 * bodies with this reader and no settings. */
export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

export type LimitedBody = { ok: true; bytes: Uint8Array<ArrayBuffer> } | { ok: false };

export async function readLimited(request: Request, limit: number): Promise<LimitedBody> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) return { ok: false };
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { ok: false };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

/** The body as UTF-8 text, up to `limit` bytes; undefined when it is larger. */
export async function readLimitedText(request: Request, limit: number): Promise<string | undefined> {
  const read = await readLimited(request, limit);
  return read.ok ? new TextDecoder().decode(read.bytes) : undefined;
}

/**
 * The same request carrying `bytes` (a body already read within its limit) instead of its stream: for code that reads
 * the body itself, such as a library's endpoint, which then can only read what was allowed in.
 */
export function withBody(request: Request, bytes: Uint8Array<ArrayBuffer>): Request {
  const headers = new Headers(request.headers);
  headers.delete("transfer-encoding");
  headers.set("content-length", String(bytes.byteLength));
  return new Request(request, { headers, body: bytes });
}
