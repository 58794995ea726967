// Watching a byte stream pass through: see each chunk (and refuse one), and learn once when the stream is over,
// however it ends (read to its end, failed, refused, or cancelled by the reader).

export interface Tap {
  /** Sees each chunk before it is passed on; returning an Error ends the stream with it instead. */
  chunk?: (value: Uint8Array) => Error | undefined;
  /** Called once when the stream is over, with the error that ended it, if any. */
  end: (error?: unknown) => void;
}

/**
 * One stream that passes a body through for any number of watchers. They see each chunk in the order they were
 * added; when one refuses a chunk, the later ones do not see it, and all of them learn the refusal as the end.
 * This is what tapping the tapped stream again would do, with one stream in between instead of one per watcher.
 */
function tapAll(body: ReadableStream<Uint8Array>, watchers: Tap[]): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let over = false;
  /** Ends every watcher once: inside out (as the stream's end reaches them), or outside in for a cancel. */
  const finish = (error?: unknown, outsideIn = false) => {
    if (over) return;
    over = true;
    const order = outsideIn ? [...watchers].reverse() : watchers;
    for (const watcher of order) watcher.end(error);
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
        for (const watcher of watchers) {
          const refused = watcher.chunk?.(value);
          if (refused) {
            finish(refused);
            await reader.cancel(refused).catch(() => {});
            controller.error(refused);
            return;
          }
        }
        controller.enqueue(value);
      } catch (err) {
        finish(err);
        controller.error(err);
      }
    },
    cancel(reason) {
      finish(reason, true);
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 }); // nothing is read before someone asks: a watcher that joins later sees every chunk
}

export function tap(body: ReadableStream<Uint8Array>, watcher: Tap): ReadableStream<Uint8Array> {
  return tapAll(body, [watcher]);
}

/** Responses made here whose body nobody has started to read: a further watcher joins their tap. */
const tapped = new WeakMap<Response, Tap[]>();

/**
 * The same response with its body tapped. Tapping a response this made, before anyone reads it, adds the watcher
 * to the one tap already there and returns that same response.
 */
export function tapResponse(response: Response, watcher: Tap): Response {
  if (!response.body) {
    watcher.end();
    return response;
  }
  const watchers = tapped.get(response);
  if (watchers && !response.bodyUsed && !response.body.locked) {
    watchers.push(watcher);
    return response;
  }
  const all = [watcher];
  const out = new Response(tapAll(response.body, all), { status: response.status, statusText: response.statusText, headers: response.headers });
  tapped.set(out, all);
  return out;
}
