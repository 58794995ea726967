// A team's identity provider (docs/oauth.md): the OpenID Connect provider its members sign in with when a
// host connects through OAuth. One zod schema: the admin API, the CLI and the sign-in read it. The client secret is
// never in it: it names one of the team's secrets (write-only, encrypted: src/lib/secrets.ts).
import * as z from "zod";
import { SECRET_NAME } from "../lib/secrets.ts";

/** A domain as email addresses end with it: lowercase labels, at least one dot. */
const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "a domain name such as example.com");

export const IdpConfig = z
  .strictObject({
    issuer: z.url({ protocol: /^https?$/ }).describe("The provider's issuer URL (its /.well-known/openid-configuration is read from it)."),
    client_id: z.string().min(1).max(512).describe("The proxy's client id at the provider."),
    client_secret: z.string().regex(SECRET_NAME, "the name of one of the team's secrets").describe("The name of the team secret holding the client secret."),
    allowed_domains: z.array(Domain).min(1).max(100).optional().describe("Verified email domains that may sign in."),
    allowed_groups: z.array(z.string().min(1).max(256)).min(1).max(100).optional().describe("Groups (from groups_claim) that may sign in."),
    groups_claim: z.string().min(1).max(128).default("groups").describe("The ID token claim that lists the user's groups."),
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/)).max(20).default(["openid", "email", "profile"]).describe("Scopes asked of the provider; openid is always asked."),
  })
  // A provider such as a public one signs in anybody: a team says who of them may come in.
  .refine((c) => c.allowed_domains !== undefined || c.allowed_groups !== undefined, {
    message: "say who may sign in: allowed_domains, allowed_groups, or both",
  });
export type IdpConfig = z.output<typeof IdpConfig>;
