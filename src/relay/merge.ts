// Pure: the merged resource, template and prompt lists of all loaded upstreams, and who owns what.
import { UriTemplate, type Prompt, type Resource, type ResourceTemplateType as ResourceTemplate } from "@modelcontextprotocol/server";
import { RpcError } from "../lib/errors.ts";
import { exposedName } from "../catalog/names.ts";
import type { ConfigMode } from "../config/validate.ts";
import type { ReadyUpstream } from "../catalog/catalog.ts";

/**
 * The collision rule: URIs and templates are forwarded verbatim, so two upstreams may claim the same one (and two
 * prompts the same exposed name). The first upstream in config order owns it; later claims are left out of the
 * merged list and never routed to.
 */
function firstClaims<T>(
  ready: readonly ReadyUpstream[],
  items: (upstream: ReadyUpstream) => readonly T[],
  key: (item: T, owner: string) => string,
): Array<{ owner: string; item: T; key: string }> {
  const seen = new Set<string>();
  const out: Array<{ owner: string; item: T; key: string }> = [];
  for (const upstream of ready) {
    for (const item of items(upstream)) {
      const k = key(item, upstream.name);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ owner: upstream.name, item, key: k });
    }
  }
  return out;
}

export function mergeResources(ready: readonly ReadyUpstream[]): Array<{ owner: string; resource: Resource }> {
  return firstClaims(ready, (u) => u.catalog.resources, (r) => r.uri).map(({ owner, item }) => ({ owner, resource: item }));
}

export function mergeTemplates(ready: readonly ReadyUpstream[]): Array<{ owner: string; template: ResourceTemplate }> {
  return firstClaims(ready, (u) => u.catalog.resourceTemplates, (t) => t.uriTemplate).map(({ owner, item }) => ({ owner, template: item }));
}

/** The upstream that serves a URI: an exact listed resource first, then the first template that matches. */
export function resourceOwner(ready: readonly ReadyUpstream[], uri: string): string | undefined {
  const exact = mergeResources(ready).find((r) => r.resource.uri === uri);
  if (exact) return exact.owner;
  for (const { owner, template } of mergeTemplates(ready)) {
    try {
      if (new UriTemplate(template.uriTemplate).match(uri)) return owner;
    } catch {
      // An upstream's malformed template matches nothing.
    }
  }
  return undefined;
}

/** Loaded upstreams that declare the resources capability, in config order. */
export function resourceServers(ready: readonly ReadyUpstream[]): ReadyUpstream[] {
  return ready.filter((u) => Boolean(u.catalog.capabilities.resources));
}

/**
 * The upstream for a URI that no list or template claims (resourceOwner found none). Resources are often not
 * listed: tools link to URIs that appear in no list. Only upstreams that declare resources are asked: in single-MCP
 * mode the one upstream; in config-file mode the one whose tool result linked the URI (`linkedBy`), else the only
 * loaded one. Undefined when that leaves no single choice (the URI is then not found).
 */
export function unclaimedResourceOwner(ready: readonly ReadyUpstream[], mode: ConfigMode, linkedBy: string | undefined): string | undefined {
  const serving = resourceServers(ready);
  if (mode === "single") return serving[0]?.name;
  if (linkedBy !== undefined && serving.some((u) => u.name === linkedBy)) return linkedBy;
  return serving.length === 1 ? serving[0]!.name : undefined;
}

/** Prompts as the host sees them: `server/prompt` in config-file mode, bare in single-MCP mode. */
export function mergePrompts(ready: readonly ReadyUpstream[], mode: ConfigMode): Array<{ owner: string; exposed: Prompt; original: string }> {
  return firstClaims(ready, (u) => u.catalog.prompts, (p, owner) => exposedName(mode, owner, p.name)).map(
    ({ owner, item, key }) => ({ owner, exposed: { ...item, name: key }, original: item.name }),
  );
}

/** The prompt the host names, with its owner and its upstream name; an unknown name is the host's mistake (-32602). */
export function promptByExposedName(ready: readonly ReadyUpstream[], mode: ConfigMode, name: string): { owner: string; original: string } {
  const found = mergePrompts(ready, mode).find((p) => p.exposed.name === name);
  if (!found) throw new RpcError("invalid_params", `Unknown prompt: ${name}`);
  return found;
}

/** The upstream that owns a template string exactly (completion references name the template). */
export function templateOwner(ready: readonly ReadyUpstream[], uriTemplate: string): string | undefined {
  return mergeTemplates(ready).find((t) => t.template.uriTemplate === uriTemplate)?.owner;
}
