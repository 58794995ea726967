// Watching a byte stream pass through: see each chunk (and refuse one), and learn once when the stream is over,
// however it ends (read to its end, failed, refused, or cancelled by the reader).

export interface Tap {
  /** Sees each chunk before it is passed on; returning an Error ends the stream with it instead. */
  chunk?: (value: Uint8Array) => Error | undefined;
  /** Called once when the stream is over, with the error that ended it, if any. */
  end: (error?: unknown) => void;
}

export function tap(body: ReadableStream<Uint8Array>, watcher: Tap): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let over = false;
  const finish = (error?: unknown) => {
    if (over) return;
    over = true;
    watcher.end(error);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          finish();
          controller.close();
          return;
        }
        const refused = watcher.chunk?.(value);
        if (refused) {
          finish(refused);
          await reader.cancel(refused).catch(() => {});
          controller.error(refused);
          return;
        }
        controller.enqueue(value);
      } catch (err) {
        finish(err);
        controller.error(err);
      }
    },
    cancel(reason) {
      finish(reason);
      return reader.cancel(reason);
    },
  });
}

/** The same response with its body tapped. */
export function tapResponse(response: Response, watcher: Tap): Response {
  if (!response.body) {
    watcher.end();
    return response;
  }
  return new Response(tap(response.body, watcher), { status: response.status, statusText: response.statusText, headers: response.headers });
}
