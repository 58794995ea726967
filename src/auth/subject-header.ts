// The subject (src/config/subject.ts) as the router hands it to a session object with every request: one route
// header holding it as compact JSON. Header values are bytes, so every character outside printable ASCII is written
// as a JSON `\u` escape (a group or a label may be in any script): the value stays valid JSON that reads back the
// same. The router strips this header from what clients send (ROUTE_HEADERS), so only the router's value arrives.
import { Subject } from "../config/subject.ts";

const OUTSIDE_ASCII = /[^\x20-\x7e]/g;

const escaped = (char: string): string => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** The header's value for `subject`. */
export const subjectHeaderValue = (subject: Subject): string => JSON.stringify(subject).replace(OUTSIDE_ASCII, escaped);

/** The subject a header value holds, or undefined when there is none or it is not one (nothing is guessed). */
export function readSubjectHeader(value: string | null): Subject | undefined {
  if (value === null) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const subject = Subject.safeParse(parsed);
  return subject.success ? subject.data : undefined;
}
