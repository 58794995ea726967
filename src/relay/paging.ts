// Pure: opaque cursors over the lists the proxy serves.
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { base64url, fromBase64url } from "../lib/bytes.ts";

export const PAGE_SIZE = 100;

/** A cursor is the base64url of `{ "o": offset }`: opaque to hosts, checked when it comes back. */
export function paginate<T>(items: readonly T[], cursor: string | undefined, pageSize = PAGE_SIZE): { page: T[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : decode(cursor);
  if (offset > items.length) throw invalid(cursor);
  const page = items.slice(offset, offset + pageSize);
  const next = offset + page.length;
  return next < items.length ? { page, nextCursor: encode(next) } : { page };
}

function encode(offset: number): string {
  return base64url(new TextEncoder().encode(JSON.stringify({ o: offset })));
}

function decode(cursor: string): number {
  try {
    const json = JSON.parse(new TextDecoder().decode(fromBase64url(cursor))) as { o?: unknown };
    if (typeof json.o === "number" && Number.isInteger(json.o) && json.o >= 0) return json.o;
  } catch {
    // fall through
  }
  throw invalid(cursor);
}

const invalid = (cursor: string | undefined) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid cursor ${JSON.stringify(cursor)}: pass back a nextCursor exactly as it was given.`);
