// The `state` of the proxy's own browser flows: the connect of an OAuth upstream (its callback learns the team from
// the state) and the member sign-in a connect link asks for (the team is in its callback's path). A state is
// `<prefix>.<nonce>.<mac>`: 128 random bits and 128 bits of HMAC-SHA256 under SESSION_KEY (src/auth/mac.ts) over the
// flow's kind, its team and the nonce, a text no other signature of the proxy uses. A callback checks it before it
// wakes the team's index: a made-up state, one of another team or another kind of flow, costs no object. Which
// browser may finish the flow is the flow cookie's business (src/oauth/member-cookie.ts). Pure apart from Web Crypto.
import { mac128, macMatches, nonce128 } from "./mac.ts";

export type FlowKind = "connect" | "member-sign-in";

const STATE = /^([a-z0-9_-]{1,64})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

const signedText = (kind: FlowKind, team: string, nonce: string): string => `flow-state/v1\n${kind}\n${team}\n${nonce}`;

/** A new state of a `kind` flow of `team`, starting with `prefix` (lower-case letters, digits, `_`, `-`). */
export async function mintFlowState(secret: string, kind: FlowKind, team: string, prefix: string): Promise<string> {
  const nonce = nonce128();
  return `${prefix}.${nonce}.${await mac128(secret, signedText(kind, team, nonce))}`;
}

/** The prefix of a state of the flows' shape (nothing checked yet), or undefined. */
export const flowStatePrefix = (state: string): string | undefined => STATE.exec(state)?.[1];

/** Whether `state` is one this proxy minted for a `kind` flow of `team` (compared in constant time). */
export async function isFlowState(secret: string, kind: FlowKind, team: string, state: string): Promise<boolean> {
  const m = STATE.exec(state);
  return m !== null && macMatches(secret, signedText(kind, team, m[2]!), m[3]!);
}
