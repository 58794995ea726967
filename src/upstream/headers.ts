// Fills `${secret:NAME}` references in an upstream's headers, right before each connect (a rotated secret is used
// from the next connect on). Only this team's secrets can be named; nothing else of the Worker is reachable.
import { SECRET_REF, secretNames } from "../config/schema.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError } from "../errors.ts";

export type SecretLookup = (name: string) => Promise<string | undefined>;

/** The headers to send, with every reference resolved; a missing secret fails this upstream only. */
export async function resolveHeaders(spec: UpstreamSpec, lookup: SecretLookup): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [header, value] of Object.entries(spec.headers)) {
    const values = new Map<string, string>();
    for (const name of secretNames(value)) {
      const secret = await lookup(name);
      if (secret === undefined) {
        throw new UpstreamError(spec.name, { kind: "config", detail: `the team has no secret named ${name} (or it cannot be opened)` });
      }
      values.set(name, secret);
    }
    out[header] = value.replace(SECRET_REF, (_ref, name: string) => values.get(name)!);
  }
  return out;
}
