// Pure: the only view of a config that may leave the proxy: literal header values masked, secret references kept.
import { SECRET_REF } from "./schema.ts";

export const MASK = "***";

/** Words that may stand before a secret reference without being secret themselves. */
const HARMLESS_LITERAL = /^\s*(?:bearer|basic|token|apikey|api-key)?\s*$/i;

/**
 * Masks every literal part of a header value that could carry a credential:
 * `Bearer ${secret:GH}` stays as written, `Bearer ghp_abc` becomes `***`.
 */
export function maskHeaderValue(value: string): string {
  const parts: string[] = [];
  let last = 0;
  let maskedAny = false;
  const push = (literal: string) => {
    if (literal === "") return;
    if (HARMLESS_LITERAL.test(literal)) parts.push(literal);
    else if (!maskedAny || parts.at(-1) !== MASK) {
      parts.push(MASK);
      maskedAny = true;
    }
  };
  for (const match of value.matchAll(SECRET_REF)) {
    push(value.slice(last, match.index));
    parts.push(match[0]);
    last = match.index + match[0].length;
  }
  push(value.slice(last));
  return parts.length ? parts.join("") : value;
}

/** A deep copy of a raw config object with every `headers` value masked. */
export function redactConfig(raw: unknown): unknown {
  if (Array.isArray(raw)) return raw.map(redactConfig);
  if (typeof raw !== "object" || raw === null) return raw;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === "headers" && typeof value === "object" && value !== null && !Array.isArray(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([h, v]) => [h, typeof v === "string" ? maskHeaderValue(v) : v]),
      );
    } else {
      out[key] = redactConfig(value);
    }
  }
  return out;
}

const CREDENTIAL_HEADER = /authorization|token|secret|password|passwd|cookie|api[-_]?key|private|session|credential/i;
const CREDENTIAL_VALUE = /^(?:bearer|basic|token)\s+\S{6,}|^(?:sk|pk|ghp|gho|ghs|glpat|xox[abp])[-_]\S{6,}|^[A-Za-z0-9+/_=.-]{32,}$/i;

/**
 * The literal part of a header value (secret references left out) when it looks like a credential: the header's
 * name says so, or the text has a credential's shape. Undefined when there is no such part.
 */
export function literalCredential(header: string, value: string): string | undefined {
  const literal = value.replace(SECRET_REF, "").trim();
  if (literal === "" || HARMLESS_LITERAL.test(literal)) return undefined;
  return CREDENTIAL_HEADER.test(header) || CREDENTIAL_VALUE.test(literal) ? literal : undefined;
}

/** Warnings for literal header values that look like credentials (they belong in team secrets). */
export function credentialWarnings(raw: unknown): string[] {
  const warnings: string[] = [];
  const visit = (node: unknown, path: string[]) => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === "headers" && typeof value === "object" && value !== null) {
        for (const [header, v] of Object.entries(value)) {
          if (typeof v !== "string" || literalCredential(header, v) === undefined) continue;
          warnings.push(
            `${[...path, "headers", header].join(".")}: the value looks like a credential written in clear; ` +
              "store it as a team secret and write ${secret:NAME} instead",
          );
        }
      } else {
        visit(value, [...path, key]);
      }
    }
  };
  visit(raw, []);
  return warnings;
}
