// Follows the host's standalone GET stream through the object: `onOpen` when it starts, `onClose` once when it
// ends, however it ends (the upstream side closed it, it failed, or the host went away and cancelled it).

export function watchStream(response: Response, onOpen: () => void, onClose: () => void): Response {
  const reader = response.body!.getReader();
  let open = true;
  const closed = () => {
    if (!open) return;
    open = false;
    onClose();
  };
  onOpen();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          closed();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        closed();
        controller.error(err);
      }
    },
    cancel(reason) {
      closed();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
