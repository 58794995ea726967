// Team management over KV: configs (validated, URLs guarded, secret references checked), tokens, secrets, pins.
// One implementation for the admin API (a KV binding) and the CLI (wrangler), so both enforce the same rules.
import { mintToken } from "../auth/token.ts";
import { kvKeys, UserRecord, type PinRecord, type TokenMetadata, type TokenRecord } from "../config/keys.ts";
import { credentialWarnings, redactConfig } from "../config/redact.ts";
import { secretNames } from "../config/schema.ts";
import { formatIssues, parseConfig, type ConfigIssue } from "../config/validate.ts";
import { IdpConfig } from "../config/idp.ts";
import { accepted } from "./kv.ts";
import { View } from "../config/view.ts";
import { SECRET_NAME, openSecret, sealSecret, type SealedSecret } from "../lib/secrets.ts";
import { ProxyError, type StoreErrorKind } from "../lib/errors.ts";
import { checkUpstreamUrl, type UrlPolicy } from "../lib/url-guard.ts";
import type { KvLike } from "./kv.ts";

/** A team's config key (`kvKeys.config`), its name captured. */
const CONFIG_KEY = /^team\/([^/]+)\/config$/;

export type PutConfigResult = { ok: true; warnings: string[] } | { ok: false; issues: ConfigIssue[] };
export type PutIdpResult = { ok: true; idp: IdpConfig } | { ok: false; issues: ConfigIssue[] };

export interface TokenInfo {
  id: string;
  label?: string;
  createdAt: string;
  view?: View;
}

export interface PinInfo {
  server: string;
  tool: string;
  hash: string;
  pending?: string;
  pendingSince?: string;
}

/** A team-store request it refuses: `secrets_disabled` (no SECRETS_KEY) or `invalid_secret_name`. */
/** What a sign-in learned of a member (the groups as src/auth/user.ts `memberClaims` bounds them). */
export interface UserSeen {
  sub: string;
  issuer: string;
  email?: string;
  emailVerified?: boolean;
  groups?: string[];
}

export class TeamStoreError extends ProxyError {
  constructor(kind: StoreErrorKind, message: string) {
    super(kind, message);
    this.name = "TeamStoreError";
  }
}

export interface TeamStoreOptions {
  /** The SECRETS_KEY material; secrets cannot be written without it. */
  secretsKey?: string | undefined;
  urlPolicy: UrlPolicy;
}

export class TeamStore {
  readonly #kv: KvLike;
  readonly #options: TeamStoreOptions;

  constructor(kv: KvLike, options: TeamStoreOptions) {
    this.#kv = kv;
    this.#options = options;
  }

  /** Validates the shape, every upstream URL and every secret reference; stores only a config that passes all three. */
  async putConfig(team: string, raw: unknown): Promise<PutConfigResult> {
    const parsed = parseConfig(raw);
    if (!parsed.ok) return { ok: false, issues: parsed.issues };
    const issues: ConfigIssue[] = [];
    const known = new Set(await this.listSecretNames(team));
    const prefix = (name: string) => (parsed.config.mode === "single" ? "" : `mcp.${name}.`);
    for (const upstream of parsed.config.upstreams) {
      const verdict = checkUpstreamUrl(upstream.url, this.#options.urlPolicy);
      if (!verdict.ok) issues.push({ path: `${prefix(upstream.name)}url`, message: verdict.reason });
      const references: Array<[path: string, value: string]> = Object.entries(upstream.headers).map(([header, value]) => [`headers.${header}`, value]);
      if (upstream.auth?.client?.secret) references.push(["auth.client.secret", upstream.auth.client.secret]);
      for (const [path, value] of references) {
        for (const name of secretNames(value)) {
          if (!known.has(name)) {
            issues.push({
              path: `${prefix(upstream.name)}${path}`,
              message: `the team has no secret named ${name}: set it first (npm run team -- secret put ${team} ${name})`,
            });
          }
        }
      }
    }
    if (issues.length > 0) return { ok: false, issues };
    await this.#kv.put(kvKeys.config(team), JSON.stringify(raw));
    return { ok: true, warnings: credentialWarnings(raw) };
  }

  /**
   * The team's identity provider (src/config/idp.ts): the shape, the issuer URL under the same guard as upstream
   * URLs (the proxy fetches its discovery document), and the client secret's name, which must be one of the team's
   * secrets. Stored as parsed (defaults filled in).
   */
  async putIdp(team: string, raw: unknown): Promise<PutIdpResult> {
    const parsed = IdpConfig.safeParse(raw);
    if (!parsed.success) return { ok: false, issues: formatIssues(parsed.error) };
    const issues: ConfigIssue[] = [];
    const verdict = checkUpstreamUrl(parsed.data.issuer, this.#options.urlPolicy);
    if (!verdict.ok) issues.push({ path: "issuer", message: verdict.reason });
    if (!(await this.listSecretNames(team)).includes(parsed.data.client_secret)) {
      issues.push({
        path: "client_secret",
        message: `the team has no secret named ${parsed.data.client_secret}: set it first (npm run team -- secret put ${team} ${parsed.data.client_secret})`,
      });
    }
    if (issues.length > 0) return { ok: false, issues };
    await this.#kv.put(kvKeys.idp(team), JSON.stringify(parsed.data));
    return { ok: true, idp: parsed.data };
  }

  /** The stored identity provider (it holds no secret value, only the secret's name); undefined when none or unreadable. */
  async getIdp(team: string): Promise<IdpConfig | undefined> {
    const text = await this.#kv.get(kvKeys.idp(team));
    if (text === null) return undefined;
    try {
      return accepted(IdpConfig, JSON.parse(text));
    } catch {
      return undefined;
    }
  }

  async deleteIdp(team: string): Promise<boolean> {
    return this.#deleteIfPresent(kvKeys.idp(team));
  }

  /**
   * Notes a member's sign-in in the team's user index: created on the first, `lastSeen` moved at most once a day (a
   * sign-in is rare, but KV writes to one key are limited), the email, whether it is verified and the groups kept
   * current (a team admin's pages read them at every request: src/edge/dashboard/team-admin-scope.ts).
   */
  async recordUser(team: string, userId: string, seen: UserSeen, now = new Date()): Promise<UserRecord> {
    const key = kvKeys.user(team, userId);
    const text = await this.#kv.get(key);
    const stored = text === null ? undefined : UserRecord.safeParse(JSON.parse(text));
    const before = stored?.success ? stored.data : undefined;
    const today = now.toISOString();
    const { groups, ...listed } = {
      sub: seen.sub,
      issuer: seen.issuer,
      ...(seen.email === undefined ? {} : { email: seen.email }),
      ...(seen.emailVerified === undefined ? {} : { emailVerified: seen.emailVerified }),
      ...(seen.groups === undefined ? {} : { groups: seen.groups }),
      firstSeen: before?.firstSeen ?? today,
      lastSeen: before !== undefined && before.lastSeen.slice(0, 10) === today.slice(0, 10) ? before.lastSeen : today,
    };
    const record: UserRecord = { ...listed, ...(groups === undefined ? {} : { groups }) };
    const changed = (r: UserRecord) => JSON.stringify([r.lastSeen, r.email, r.emailVerified, r.groups]);
    // The groups stay out of the key's metadata: KV keeps at most 1,024 bytes there.
    if (before === undefined || changed(before) !== changed(record)) await this.#kv.put(key, JSON.stringify(record), listed);
    return record;
  }

  /** The team's members who signed in, from the keys' metadata (no reads). */
  async listUsers(team: string): Promise<Array<UserRecord & { id: string }>> {
    const prefix = kvKeys.userPrefix(team);
    return (await this.#kv.list(prefix)).flatMap((entry) => {
      const meta = UserRecord.safeParse(entry.metadata);
      return meta.success ? [{ id: entry.name.slice(prefix.length), ...meta.data }] : [];
    });
  }

  async getUser(team: string, userId: string): Promise<UserRecord | undefined> {
    const text = await this.#kv.get(kvKeys.user(team, userId));
    if (text === null) return undefined;
    const parsed = UserRecord.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  }

  async deleteUser(team: string, userId: string): Promise<boolean> {
    return this.#deleteIfPresent(kvKeys.user(team, userId));
  }

  /** Deletes a key; false when there was nothing to delete (the admin API answers 404 then). */
  async #deleteIfPresent(key: string): Promise<boolean> {
    if ((await this.#kv.get(key)) === null) return false;
    await this.#kv.delete(key);
    return true;
  }

  /** The stored config as it may be shown: literal header values masked, secret references as written. */
  /**
   * The teams that have a config, by name. KV has no folders, so this lists every key under `team/` (a page per
   * thousand keys) and keeps the config keys: fine for an operator's page, not for a request's path.
   */
  async listTeams(): Promise<string[]> {
    const names = (await this.#kv.list(kvKeys.teamsPrefix)).map((entry) => CONFIG_KEY.exec(entry.name)?.[1]);
    return names.filter((name) => name !== undefined).sort();
  }

  async getConfig(team: string): Promise<unknown | undefined> {
    const text = await this.#kv.get(kvKeys.config(team));
    return text === null ? undefined : redactConfig(JSON.parse(text));
  }

  async deleteConfig(team: string): Promise<boolean> {
    return this.#deleteIfPresent(kvKeys.config(team));
  }

  /**
   * A new token; the token itself is returned once and only its hash is stored. `view` is the view its sessions get
   * when the MCP URL names none.
   */
  async mintToken(team: string, label?: string, view?: View): Promise<TokenInfo & { token: string }> {
    const minted = await mintToken();
    const createdAt = new Date().toISOString();
    const metadata: TokenMetadata = { createdAt, ...(label ? { label } : {}), ...(view ? { view } : {}) };
    const record: TokenRecord = { hash: minted.hash, ...metadata };
    await this.#kv.put(kvKeys.token(team, minted.id), JSON.stringify(record), metadata);
    return { id: minted.id, token: minted.token, ...metadata };
  }

  async listTokens(team: string): Promise<TokenInfo[]> {
    const prefix = kvKeys.tokenPrefix(team);
    return (await this.#kv.list(prefix)).map((entry) => {
      const meta = (entry.metadata ?? {}) as Partial<TokenMetadata>;
      // Metadata is ours but read as untrusted: a view it does not name is left out.
      const view = View.safeParse(meta.view);
      return {
        id: entry.name.slice(prefix.length),
        createdAt: meta.createdAt ?? "",
        ...(meta.label ? { label: meta.label } : {}),
        ...(view.success ? { view: view.data } : {}),
      };
    });
  }

  async revokeToken(team: string, id: string): Promise<boolean> {
    return this.#deleteIfPresent(kvKeys.token(team, id));
  }

  /** Encrypts and stores a secret; its value can never be read back through the store. */
  async putSecret(team: string, name: string, value: string): Promise<void> {
    if (!SECRET_NAME.test(name)) throw new TeamStoreError("invalid_secret_name", `bad secret name ${JSON.stringify(name)}: use letters, digits and _, starting with a letter or _`);
    if (!this.#options.secretsKey) throw new TeamStoreError("secrets_disabled", "SECRETS_KEY is not set: secrets cannot be stored without it");
    const sealed = await sealSecret(this.#options.secretsKey, team, name, value);
    await this.#kv.put(kvKeys.secret(team, name), JSON.stringify(sealed), { updatedAt: new Date().toISOString() });
  }

  async listSecretNames(team: string): Promise<string[]> {
    const prefix = kvKeys.secretPrefix(team);
    return (await this.#kv.list(prefix)).map((entry) => entry.name.slice(prefix.length)).sort();
  }

  async listSecrets(team: string): Promise<Array<{ name: string; updatedAt?: string }>> {
    const prefix = kvKeys.secretPrefix(team);
    return (await this.#kv.list(prefix)).map((entry) => {
      const meta = (entry.metadata ?? {}) as { updatedAt?: string };
      return { name: entry.name.slice(prefix.length), ...(meta.updatedAt ? { updatedAt: meta.updatedAt } : {}) };
    });
  }

  async deleteSecret(team: string, name: string): Promise<boolean> {
    return this.#deleteIfPresent(kvKeys.secret(team, name));
  }

  async listPins(team: string): Promise<PinInfo[]> {
    const prefix = kvKeys.pinPrefix(team);
    return (await this.#kv.list(prefix)).map((entry) => {
      const [server = "", tool = ""] = entry.name.slice(prefix.length).split("/");
      return { server, tool: decodeURIComponent(tool), ...((entry.metadata ?? { hash: "" }) as PinRecord) };
    });
  }

  /** Accepts a changed tool definition: its new hash becomes the pinned one. False when nothing was waiting. */
  async approvePin(team: string, server: string, tool: string): Promise<boolean> {
    const key = kvKeys.pin(team, server, tool);
    const text = await this.#kv.get(key);
    if (text === null) return false;
    const pin = JSON.parse(text) as PinRecord;
    if (!pin.pending) return false;
    const approved: PinRecord = { hash: pin.pending };
    await this.#kv.put(key, JSON.stringify(approved), approved);
    return true;
  }
}

/** A team secret's value, for the session object at connect time only. */
export async function readSecret(kv: KvLike, material: string | undefined, team: string, name: string): Promise<string | undefined> {
  if (!material || !SECRET_NAME.test(name)) return undefined;
  const text = await kv.get(kvKeys.secret(team, name));
  if (text === null) return undefined;
  return openSecret(material, team, name, JSON.parse(text) as SealedSecret);
}
