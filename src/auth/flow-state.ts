// The `state` of the proxy's own browser flows: the connect of an OAuth upstream (its callback learns the team from
// the state's prefix), the member sign-in a connect link asks for (the team is in its callback's path; prefix
// `m`) and a team admin's sign-in to the team's dashboard (prefix `d`). A state is `<prefix>.<handle>`: the prefix in clear, for the callback to read before it checks anything, and a
// handle of src/auth/signed.ts (`<nonce>.fs2.<mac>`) bound to the flow's kind, its team and the prefix. A callback
// checks it before it wakes the team's index: a made-up state, one of another team or another kind of flow, costs no
// object. Which browser may finish the flow is the flow cookie's business (src/edge/oauth/member-cookie.ts). Pure apart
// from Web Crypto.
import * as z from "zod";
import { hasHandleShape, handleFormat, openHandle, sealHandle } from "./signed.ts";
import { oldFlowState, oldFlowStatePrefix } from "./legacy-handles.ts";

export type FlowKind = "connect" | "member-sign-in" | "dashboard-sign-in";

const FLOW_STATE = handleFormat("fs2", z.undefined());
const PREFIXED = /^([a-z0-9_-]{1,64})\.(.+)$/;

/** A new state of a `kind` flow of `team`, starting with `prefix` (lower-case letters, digits, `_`, `-`). */
export async function mintFlowState(secret: string, kind: FlowKind, team: string, prefix: string): Promise<string> {
  return `${prefix}.${(await sealHandle(secret, FLOW_STATE, [kind, team, prefix], undefined)).handle}`;
}

/** The prefix of a team admin's dashboard sign-in's state (a connect link's member sign-in has `m`). */
export const DASHBOARD_STATE_PREFIX = "d";

/** The prefix and handle of a state of the flows' shape (nothing checked yet). */
function split(state: string): { prefix: string; handle: string } | undefined {
  const m = PREFIXED.exec(state);
  return m && hasHandleShape(FLOW_STATE, m[2]!) ? { prefix: m[1]!, handle: m[2]! } : undefined;
}

/** The prefix of a state of the flows' shape (nothing checked yet), or undefined; a state of the form before too. */
export const flowStatePrefix = (state: string): string | undefined => split(state)?.prefix ?? oldFlowStatePrefix(state);

/** Whether a callback's state has a dashboard sign-in's prefix (nothing checked yet: its finish step checks it). */
export const isDashboardSignInState = (state: string | undefined): boolean => state !== undefined && flowStatePrefix(state) === DASHBOARD_STATE_PREFIX;

/**
 * Whether `state` is one this proxy minted for a `kind` flow of `team` (compared in constant time); a state of the
 * form before (`<prefix>.<nonce>.<mac>`) too: such flows last ten minutes.
 */
export async function isFlowState(secret: string, kind: FlowKind, team: string, state: string): Promise<boolean> {
  const parts = split(state);
  const opened = parts ? await openHandle(secret, FLOW_STATE, [kind, team, parts.prefix], parts.handle) : await oldFlowState(secret, FLOW_STATE, kind, team, state);
  return opened?.ok === true;
}
