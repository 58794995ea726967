// Types for the part of oidc-provider 9 (which ships no declarations) that harness/idp.ts uses. Written against
// node_modules/oidc-provider/lib (provider.js, helpers/defaults.js, models/grant.js) of 9.13.3; @types/oidc-provider
// exists but would be one more dependency for a test fixture. Remove this file if that package is ever added.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** What the provider stores through an adapter: a model's payload (`grantId`, `uid`, … among its fields). */
  export interface AdapterPayload {
    [key: string]: unknown;
    grantId?: string;
    uid?: string;
    userCode?: string;
    /** Seconds since the epoch at which the artifact (an authorization code, …) was used. */
    consumed?: number;
  }

  /** Storage for one model (`Session`, `Grant`, `AuthorizationCode`, `Interaction`, …). */
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Account {
    accountId: string;
    /** The account's claims; the provider keeps those the granted scopes and claims allow. */
    claims(use: "id_token" | "userinfo", scope: string, claims: object, rejected: string[]): Promise<Record<string, unknown>>;
  }

  export interface ClientMetadata {
    client_id: string;
    client_secret?: string;
    redirect_uris: string[];
    grant_types?: string[];
    response_types?: string[];
    token_endpoint_auth_method?: string;
    id_token_signed_response_alg?: string;
    [key: string]: unknown;
  }

  export interface Configuration {
    adapter?: (model: string) => Adapter;
    clients?: ClientMetadata[];
    claims?: Record<string, string[] | null>;
    clientAuthMethods?: string[];
    clientBasedCORS?: (ctx: unknown, origin: string, client: unknown) => boolean;
    conformIdTokenClaims?: boolean;
    cookies?: { keys?: string[] };
    features?: Record<string, { enabled: boolean; [key: string]: unknown }>;
    findAccount?: (ctx: unknown, id: string) => Promise<Account | undefined>;
    interactions?: { url?: (ctx: unknown, interaction: Interaction) => string | Promise<string> };
    jwks?: { keys: object[] };
    pkce?: { required?: (ctx: unknown, client: unknown) => boolean };
    renderError?: (ctx: RenderContext, out: Record<string, string>, error: Error) => void | Promise<void>;
    scopes?: string[];
    ttl?: Record<string, number>;
  }

  /** The Koa context, as far as `renderError` writes to it. */
  export interface RenderContext {
    type: string;
    body: unknown;
  }

  export interface Prompt {
    name: "login" | "consent" | (string & {});
    reasons: string[];
    details: {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      [key: string]: unknown;
    };
  }

  /** A login or consent step in progress, found by the `_interaction` cookie. */
  export interface Interaction {
    uid: string;
    prompt: Prompt;
    params: Record<string, unknown> & { client_id?: string; scope?: string; redirect_uri?: string };
    session?: { accountId: string; uid: string; cookie: string };
    grantId?: string;
    returnTo: string;
  }

  export interface InteractionResults {
    login?: { accountId: string; remember?: boolean };
    consent?: { grantId: string };
    error?: string;
    error_description?: string;
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(indicator: string, scope: string): void;
    /** Stores the grant and answers its id. */
    save(): Promise<string>;
  }

  export interface GrantConstructor {
    new (properties: { accountId: string; clientId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: Configuration);
    readonly issuer: string;
    readonly Grant: GrantConstructor;
    /** Static clients are checked against the client schema only here, at their first lookup. */
    readonly Client: { find(id: string): Promise<object | undefined> };
    /** The Koa app as a node:http request listener. */
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    /** Stores the result and answers 303 to the authorization endpoint's resume URL. */
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: "grant.success", listener: (ctx: unknown) => void): this;
    on(event: "grant.error" | "server_error" | "authorization.error", listener: (ctx: unknown, error: Error) => void): this;
  }
}
