// Pure: the merged resource, template and prompt lists of all loaded upstreams, and who owns what.
import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import type { Prompt, Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import type { ConfigMode } from "../config/validate.ts";
import type { ReadyUpstream } from "../upstream/registry.ts";

/**
 * The collision rule: URIs and templates are forwarded verbatim, so two upstreams may claim the same one.
 * The first upstream in config order owns it; later claims are left out of the merged list and never routed to.
 */
export function mergeResources(ready: readonly ReadyUpstream[]): Array<{ owner: string; resource: Resource }> {
  const seen = new Set<string>();
  const out: Array<{ owner: string; resource: Resource }> = [];
  for (const { name, catalog } of ready) {
    for (const resource of catalog.resources) {
      if (seen.has(resource.uri)) continue;
      seen.add(resource.uri);
      out.push({ owner: name, resource });
    }
  }
  return out;
}

export function mergeTemplates(ready: readonly ReadyUpstream[]): Array<{ owner: string; template: ResourceTemplate }> {
  const seen = new Set<string>();
  const out: Array<{ owner: string; template: ResourceTemplate }> = [];
  for (const { name, catalog } of ready) {
    for (const template of catalog.resourceTemplates) {
      if (seen.has(template.uriTemplate)) continue;
      seen.add(template.uriTemplate);
      out.push({ owner: name, template });
    }
  }
  return out;
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

/** Prompts as the host sees them: `server/prompt` in config-file mode, bare in single-MCP mode. */
export function mergePrompts(ready: readonly ReadyUpstream[], mode: ConfigMode): Array<{ owner: string; exposed: Prompt; original: string }> {
  const seen = new Set<string>();
  const out: Array<{ owner: string; exposed: Prompt; original: string }> = [];
  for (const { name, catalog } of ready) {
    for (const prompt of catalog.prompts) {
      const exposedName = mode === "single" ? prompt.name : `${name}/${prompt.name}`;
      if (seen.has(exposedName)) continue;
      seen.add(exposedName);
      out.push({ owner: name, exposed: { ...prompt, name: exposedName }, original: prompt.name });
    }
  }
  return out;
}

/** The upstream that owns a template string exactly (completion references name the template). */
export function templateOwner(ready: readonly ReadyUpstream[], uriTemplate: string): string | undefined {
  return mergeTemplates(ready).find((t) => t.template.uriTemplate === uriTemplate)?.owner;
}
