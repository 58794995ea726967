// What a host may register at a team's server (RFC 7591), bounded. Anyone may register, so a registration must stay
// small, and lives no longer than its grants need (src/edge/oauth/server.ts): the metadata document is at most REGISTRATION_LIMIT bytes (read by src/edge/oauth/forms.ts before
// the library sees it), and each field within a size a consent page can show. The library checks what the fields
// mean (redirect URIs, grant types, methods); this checks only their size, and runs before the library writes.
import * as z from "zod";
import type { ClientRegistrationCallbackOptions, ClientRegistrationCallbackResult } from "@cloudflare/workers-oauth-provider";

/** A name as a consent page shows it (the library falls back on the client id without one). */
export const MAX_CLIENT_NAME_CHARS = 200;
export const MAX_REDIRECT_URIS = 10;
export const MAX_URI_CHARS = 2_048;
const MAX_CONTACTS = 10;
const MAX_CONTACT_CHARS = 320;

const uri = z.string().max(MAX_URI_CHARS, `each URI is at most ${MAX_URI_CHARS} characters`);
const name = z.string().max(MAX_CLIENT_NAME_CHARS, `a name is at most ${MAX_CLIENT_NAME_CHARS} characters`);

/** The fields' sizes; unknown fields and types are the library's to judge (it refuses what it cannot use). */
const RegistrationSizes = z
  .object({
    client_name: name.optional(),
    redirect_uris: z.array(uri).max(MAX_REDIRECT_URIS, `at most ${MAX_REDIRECT_URIS} redirect URIs`).optional(),
    client_uri: uri.optional(),
    logo_uri: uri.optional(),
    policy_uri: uri.optional(),
    tos_uri: uri.optional(),
    jwks_uri: uri.optional(),
    contacts: z.array(z.string().max(MAX_CONTACT_CHARS, `each contact is at most ${MAX_CONTACT_CHARS} characters`)).max(MAX_CONTACTS, `at most ${MAX_CONTACTS} contacts`).optional(),
  })
  .catchall(z.unknown());

/** Localized variants (`client_name#fr`, RFC 7591 2.2) are held to their field's size. */
const localized = (metadata: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    const hash = key.indexOf("#");
    if (hash > 0 && typeof value === "string") out[key.slice(0, hash)] = value;
  }
  return out;
};

/** The library's registration callback: undefined lets the registration go on, else its RFC 7591 error. */
export function boundedRegistration({ clientMetadata }: ClientRegistrationCallbackOptions): ClientRegistrationCallbackResult | undefined {
  for (const fields of [clientMetadata, localized(clientMetadata)]) {
    const parsed = RegistrationSizes.safeParse(fields);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.map(String).join(".") ?? "";
      return { code: "invalid_client_metadata", description: `${where}: ${issue?.message ?? "too large"}`, status: 400 };
    }
  }
  return undefined;
}
