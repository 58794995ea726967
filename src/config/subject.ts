// Who a team's policies are decided for: a team token (a bot, a CI job) or a signed-in member, with what the rules'
// `who` selectors can match. The router learns it (the token's record, the member's grant) and hands it to the
// session object with every request; the policy decision, the catalogs a caller is shown and the audit trail all
// read this one shape.
import * as z from "zod";

export const Subject = z.object({
  /** `token`: a team token (`team token`); `member`: a member signed in through the team's identity provider. */
  kind: z.enum(["token", "member"]),
  /** The token's id, or the member's pseudonymous user id (never an email). */
  id: z.string().min(1),
  /** A token's label (`team token --label`): `token:<label>` matches every token that bears it. */
  label: z.string().optional(),
  /** A member's email, only when the identity provider verified it (`user:` and `domain:` match only these). */
  email: z.string().optional(),
  /** A member's groups, from the identity provider's groups claim at sign-in and at each refresh. */
  groups: z.array(z.string()).optional(),
});
export type Subject = z.infer<typeof Subject>;
