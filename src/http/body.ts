// Reads a request body up to a byte limit, counting the streamed bytes (a Content-Length header can lie).

export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

export type BodyResult = { ok: true; text: string } | { ok: false; tooLarge: true };

export async function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<BodyResult> {
  const header = request.headers.get("content-length");
  const declared = Number(header ?? "0");
  if (declared > limit) return { ok: false, tooLarge: true };
  if (!request.body) return { ok: true, text: "" };
  // With a Content-Length the runtime delivers exactly that many bytes (HTTP framing), so one read suffices;
  // without one (chunked), the bytes are counted as they stream in.
  if (header !== null && Number.isSafeInteger(declared)) return { ok: true, text: await request.text() };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return { ok: false, tooLarge: true };
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, text: new TextDecoder().decode(all) };
}
