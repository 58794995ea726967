// How current an object's eager catalogs are, against the team's (the 2026 era's tools/list must show every principal
// of a team the same catalog, and stay current without a session to hear upstreams on). Each read anew of an eager
// upstream is kept for the team in its catalog cache; a newer reading another object of the team made is taken from
// there; a catalog nobody of the team has read from its upstream for a given age is read anew.
import { catalogChange, type CatalogChange, type UpstreamCatalog } from "../catalog/catalog.ts";
import type { UpstreamSpec } from "../config/validate.ts";
import { UpstreamStatus, isLazy, readyRecord, type RecordBook } from "./records.ts";
import type { CatalogCache, CatalogPolicy, CatalogRead } from "./startup.ts";

/** What the freshness of an object's catalogs works on: the registry's cache, policy, records and reads. */
export interface FreshnessParts {
  cache: CatalogCache | undefined;
  policy: CatalogPolicy;
  records: RecordBook;
  /** Reads a ready upstream's catalog anew and says what changed (the registry's `refresh`, which shares the read). */
  refresh: (name: string) => Promise<CatalogChange>;
  /** A catalog changed outside a host request. */
  onChange?: ((change: CatalogChange) => void) | undefined;
}

const changed = (c: CatalogChange) => c.tools || c.resources || c.prompts;

export class Freshness {
  readonly #parts: FreshnessParts;
  /** When this object last read each eager upstream anew (in this object life: a restored catalog's age is unknown). */
  readonly #readAt = new Map<string, number>();
  /** Reads anew under way, by upstream: a check does not start another. */
  readonly #reading = new Map<string, Promise<unknown>>();

  constructor(parts: FreshnessParts) {
    this.#parts = parts;
  }

  /**
   * A catalog this object read from an eager upstream, once shown: noted, and kept for the team. A read another
   * object began later and found something else has overtaken it (the upstream changed meanwhile): that one is shown
   * instead. A lazy upstream's catalog is the loading object's alone.
   */
  async share(spec: UpstreamSpec, read: CatalogRead): Promise<void> {
    if (isLazy(spec)) return;
    this.#readAt.set(spec.name, Math.max(read.readAt, this.#readAt.get(spec.name) ?? 0));
    // The team's copy is a help, not a need: a failed write leaves the object's own catalog as it is.
    const newer = await this.#parts.cache?.put(spec, read.raw, read.readAt).catch(() => undefined);
    if (newer) await this.#adopt(spec, newer);
  }

  /** Notes a read anew of an eager upstream under way until it settles; returns it. */
  track<T>(spec: UpstreamSpec, read: Promise<T>): Promise<T> {
    if (isLazy(spec)) return read;
    const name = spec.name;
    this.#reading.set(name, read);
    const settle = () => {
      if (this.#reading.get(name) === read) this.#reading.delete(name);
    };
    read.then(settle, settle);
    return read;
  }

  /**
   * Brings every ready eager upstream of `upstreams` to the team's latest reading, and has those nobody of the team
   * read from the upstream for `maxAgeMs` read anew, in the background (not waited for: the list is served as it is,
   * and a change is told as any other). One with a read under way is not read again (if that read turns out older
   * than what it showed meanwhile, `share` takes the newer back).
   */
  async freshen(upstreams: readonly UpstreamSpec[], maxAgeMs: number, now = Date.now()): Promise<void> {
    const { records, cache, refresh, onChange } = this.#parts;
    const due = upstreams.filter((spec) => !isLazy(spec) && records.get(spec.name)?.status === UpstreamStatus.ready);
    await Promise.all(
      due.map(async (spec) => {
        const team = (await cache?.latest(spec).catch(() => undefined)) ?? {};
        if (team.newer) await this.#adopt(spec, team.newer);
        const last = Math.max(team.checkedAt ?? 0, this.#readAt.get(spec.name) ?? 0);
        if (now - last < maxAgeMs || this.#reading.has(spec.name)) return;
        void refresh(spec.name).then((change) => changed(change) && onChange?.(change), () => {});
      }),
    );
  }

  /** The team's newer reading of an eager upstream, shown in place of this object's when it shows anything else. */
  async #adopt(spec: UpstreamSpec, raw: UpstreamCatalog): Promise<void> {
    const { records, policy, onChange } = this.#parts;
    const catalog = await policy(spec, raw);
    const before = records.get(spec.name);
    if (before?.status !== UpstreamStatus.ready) return;
    const change = catalogChange(before.catalog, catalog);
    if (!changed(change)) return;
    await records.set(spec.name, readyRecord(catalog));
    onChange?.(change);
  }
}
