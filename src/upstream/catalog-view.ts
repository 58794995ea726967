// The catalog view of a config and an object's records: what discover_tool's description (or answer) shows.
import type { CatalogGroup, CatalogView } from "../catalog/catalog.ts";
import type { ResolvedConfig, UpstreamSpec } from "../config/validate.ts";
import { UpstreamStatus, isLazy, type RecordBook } from "./records.ts";

/**
 * Each configured upstream in config order: ready (its tools), unavailable (why), connecting (its first connection
 * under way), or left out (not tried yet, or lazy); then the config's invalid entries; `lazy` as the loadable servers.
 * `hidden`: servers the caller's policies hide whole, left out. `eagerOnly` leaves loaded lazy servers out of the groups (the team's view: what it offers, not what was loaded).
 */
export function catalogView(
  config: ResolvedConfig,
  records: RecordBook,
  connecting: (name: string) => boolean,
  lazy: readonly UpstreamSpec[],
  hidden: (name: string) => boolean,
  eagerOnly = false,
): CatalogView {
  const groups: CatalogGroup[] = [];
  for (const spec of config.upstreams) {
    if ((eagerOnly && isLazy(spec)) || hidden(spec.name)) continue;
    const record = records.get(spec.name);
    if (record?.status === UpstreamStatus.ready) {
      groups.push({ server: spec.name, state: "ready", tools: record.catalog.tools, description: spec.description });
    } else if (record?.status === UpstreamStatus.failed) {
      groups.push({ server: spec.name, state: "unavailable", reason: record.reason, ...(record.kind ? { kind: record.kind } : {}) });
    } else if (!record && connecting(spec.name)) {
      groups.push({ server: spec.name, state: "connecting" });
    }
  }
  for (const entry of config.invalid ?? []) {
    groups.push({ server: entry.name, state: "unavailable", reason: `invalid config entry: ${entry.reason}` });
  }
  return {
    mode: config.mode,
    groups,
    lazy: lazy.map((spec) => ({ name: spec.name, description: spec.description ?? "" })),
    dynamic: config.upstreams.some(isLazy),
  };
}
