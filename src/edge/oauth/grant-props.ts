// What a grant of a team's authorization server carries (the OAuth library encrypts it: readable only with one of
// the grant's tokens), and the subject the team's policies see in it.
import * as z from "zod";
import type { Subject } from "../../config/subject.ts";
import type { MemberClaims } from "../../auth/user.ts";

/**
 * The team it was granted for, the user, and a 128-bit binding that stands for the grant wherever the proxy binds
 * state to a token (session ids, toolset handles, request state, a principal's object): it survives every refresh.
 */
export const GrantProps = z.object({
  team: z.string(),
  binding: z.string().regex(/^[A-Za-z0-9_-]{22}$/),
  /** `email` as the provider gave it, verified or not (the user index and the admin's grant list hold the same). */
  user: z.object({ id: z.string(), email: z.string().optional() }),
  /**
   * What the team's identity provider said of the member at sign-in, renewed at each refresh (grant-refresh.ts):
   * whether it verified the email, and the member's groups, bounded (src/auth/user.ts memberClaims). Absent in a
   * grant made before the proxy kept them: such a grant has no groups and no verified email until it expires.
   */
  member: z.object({ emailVerified: z.boolean(), groups: z.array(z.string()) }).optional(),
  /**
   * The provider's refresh token when it gave one, used at the grant's refresh to learn the member's groups of that
   * moment. Only in the grant's own props (read at a refresh): an access token's props never carry it.
   */
  idpRefreshToken: z.string().optional(),
});
export type GrantProps = z.infer<typeof GrantProps>;

/** The grant's props for a member admitted with these claims (at sign-in, or again at a refresh). */
export function memberProps(props: Omit<GrantProps, "member" | "idpRefreshToken">, claims: MemberClaims, idpRefreshToken: string | undefined): GrantProps {
  const { email, emailVerified, groups } = claims;
  return {
    team: props.team,
    binding: props.binding,
    user: { id: props.user.id, ...(email === undefined ? {} : { email }) },
    member: { emailVerified, groups },
    ...(idpRefreshToken === undefined ? {} : { idpRefreshToken }),
  };
}

/** An access token's props: the grant's without the provider's refresh token. */
export function accessTokenProps(props: GrantProps): GrantProps {
  const { idpRefreshToken: _, ...rest } = props;
  return rest;
}

/** Who the team's policies see in a grant: the member's id, the email only if the provider verified it, the groups. */
export const memberSubject = (props: GrantProps): Subject => ({
  kind: "member",
  id: props.user.id,
  ...(props.member?.emailVerified === true && props.user.email !== undefined ? { email: props.user.email } : {}),
  groups: props.member?.groups ?? [],
});
