// How the proxy connects one upstream of a team, the same for a session and for the dashboard's probe: the URL checked
// again against this deployment's address policy, the headers resolved with the team's secrets (and those secrets
// withheld from whatever the upstream says), an OAuth upstream's account, then the client's own connect.
import type { UpstreamSpec } from "../config/validate.ts";
import { PRODUCT, type Env } from "../lib/env.ts";
import { UpstreamError } from "../lib/errors.ts";
import { checkUpstreamUrl } from "../lib/url-guard.ts";
import { urlPolicy } from "../lib/url-policy.ts";
import { bindingKv } from "../store/binding-kv.ts";
import { readSecret } from "../store/store.ts";
import { UpstreamClient, type ClientDeps } from "../upstream/client.ts";
import { resolveHeaders } from "../upstream/headers.ts";
import type { SessionRecord } from "./state.ts";
import { upstreamAuth } from "./upstream-auth.ts";

/** What the caller's connection brings besides the team's config and secrets: its hooks, fetch gate and era memory. */
export type ConnectLinks = Pick<ClientDeps, "hooks" | "gate" | "eras">;

/** Connects `spec` for the session (or probe) `record`; fails with an UpstreamError of the fault's kind. */
export async function connectUpstream(env: Env, record: SessionRecord, spec: UpstreamSpec, links: ConnectLinks, signal?: AbortSignal): Promise<UpstreamClient> {
  // Checked again before every connect: the policy of this deployment may be stricter than when it was written.
  const verdict = checkUpstreamUrl(spec.url, urlPolicy(env));
  if (!verdict.ok) throw new UpstreamError(spec.name, { kind: "config", detail: verdict.reason });
  const kv = bindingKv(env.TEAMS);
  const { headers, withheld } = await resolveHeaders(spec, (name) => readSecret(kv, env.SECRETS_KEY, record.team, name));
  // An OAuth upstream's account (the team's or the member's): no account, no connect (and no strike: errors.ts).
  const auth = await upstreamAuth(env, record, spec);
  const deps: ClientDeps = {
    fetch: (input, init) => fetch(input, init),
    clientInfo: { name: PRODUCT.name, version: PRODUCT.version },
    ...links,
    withheld,
    ...(auth ? { auth } : {}),
  };
  return UpstreamClient.connect(spec, headers, deps, signal);
}
