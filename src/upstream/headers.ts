// Fills `${secret:NAME}` references in an upstream's headers, right before it is connected.
import { SECRET_REF } from "../config/schema.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError } from "../errors.ts";

export type SecretLookup = (name: string) => string | undefined;

/** The headers to send, with every reference resolved; a missing secret fails this upstream only. */
export function resolveHeaders(spec: UpstreamSpec, lookup: SecretLookup): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [header, value] of Object.entries(spec.headers)) {
    out[header] = value.replace(new RegExp(SECRET_REF.source, "g"), (_ref, name: string) => {
      const secret = lookup(name);
      if (secret === undefined) {
        throw new UpstreamError(spec.name, { kind: "config", detail: `the team has no secret named ${name}` });
      }
      return secret;
    });
  }
  return out;
}
