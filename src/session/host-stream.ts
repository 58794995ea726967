// Follows the host's standalone GET stream through the object: `onOpen` when it starts, `onClose` once when it
// ends, however it ends (the upstream side closed it, it failed, or the host went away and cancelled it).
import { tapResponse } from "../streams.ts";

export function watchStream(response: Response, onOpen: () => void, onClose: () => void): Response {
  onOpen();
  return tapResponse(response, { end: () => onClose() });
}
