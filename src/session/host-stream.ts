// Follows an answer's body through the object (the host's standalone GET stream, or any answer still being written):
// `onOpen` when it starts, `onClose` once when it ends, however it ends (the body was written to its end, it
// failed, or the host went away and cancelled it).
import { tapResponse } from "../streams.ts";

export function watchStream(response: Response, onOpen: () => void, onClose: () => void): Response {
  onOpen();
  return tapResponse(response, { end: () => onClose() });
}
