// Fills `${secret:NAME}` references in an upstream's headers, right before each connect (a rotated secret is used
// from the next connect on). Only this team's secrets can be named; nothing else of the Worker is reachable. Says,
// too, what of the headers the upstream must never show back (withheld.ts).
import { SECRET_REF, secretNames } from "../config/schema.ts";
import { literalCredential } from "../config/redact.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamError } from "../lib/errors.ts";

export type SecretLookup = (name: string) => Promise<string | undefined>;

export interface ResolvedHeaders {
  /** The headers to send. */
  headers: Record<string, string>;
  /**
   * What the upstream's messages are cleaned of: the value of every secret the headers name, and the literal text of
   * a header that looks like a credential (the ones a config is warned about: config/redact.ts). Other literal text
   * (a region, a version, a team's id) is the config's and stays: withholding it would garble ordinary words.
   */
  withheld: string[];
}

/** The headers to send, with every reference resolved; a missing secret fails this upstream only. */
export async function resolveHeaders(spec: UpstreamSpec, lookup: SecretLookup): Promise<ResolvedHeaders> {
  const headers: Record<string, string> = {};
  const withheld: string[] = [];
  for (const [header, value] of Object.entries(spec.headers)) {
    const values = new Map<string, string>();
    for (const name of secretNames(value)) {
      const secret = await lookup(name);
      if (secret === undefined) {
        throw new UpstreamError(spec.name, { kind: "config", detail: `the team has no secret named ${name} (or it cannot be opened)` });
      }
      values.set(name, secret);
      withheld.push(secret);
    }
    headers[header] = value.replace(SECRET_REF, (_ref, name: string) => values.get(name)!);
    // The text around the references (split keeps each reference's name at the odd places).
    if (literalCredential(header, value) !== undefined) withheld.push(...value.split(SECRET_REF).filter((_part, i) => i % 2 === 0).map((part) => part.trim()));
  }
  return { headers, withheld };
}
