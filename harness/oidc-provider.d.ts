// Types for the part of oidc-provider 9 (which ships no declarations) that the harness uses (idp.ts, oidc-shared.ts,
// oauth-upstream.ts). Written against node_modules/oidc-provider/lib (provider.js, helpers/defaults.js,
// helpers/errors.js, models/grant.js, models/client.js, helpers/resource_server.js) of 9.13.3; @types/oidc-provider
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

  /** The request context the provider hands to configuration functions and events (Koa's, with `oidc`). */
  export interface ProviderContext {
    oidc?: {
      /** The request's recognized parameters (`grant_type`, `resource`, `scope`, `client_id`, …). */
      params?: Record<string, unknown>;
      client?: ClientModel;
      route?: string;
    };
  }

  /** A client as the provider holds it (static, registered, or found again in storage). */
  export interface ClientModel {
    clientId: string;
    grantTypeAllowed(type: string): boolean;
  }

  /** What `features.resourceIndicators.getResourceServerInfo` answers for a resource indicator it accepts. */
  export interface ResourceServerInfo {
    /** The scopes an access token for this resource may carry, space-separated. */
    scope: string;
    audience?: string;
    /** Seconds. */
    accessTokenTTL?: number;
    accessTokenFormat?: "opaque" | "jwt";
    jwt?: { sign?: { alg?: string; kid?: string } };
  }

  /** An issued token as events see it (`access_token.issued` for JWT access tokens, which are never stored). */
  export interface TokenModel {
    jti: string;
    kind: string;
    accountId?: string;
    clientId?: string;
    grantId?: string;
    exp?: number;
  }

  export interface Configuration {
    adapter?: (model: string) => Adapter;
    clients?: ClientMetadata[];
    claims?: Record<string, string[] | null>;
    clientAuthMethods?: string[];
    clientBasedCORS?: (ctx: unknown, origin: string, client: unknown) => boolean;
    conformIdTokenClaims?: boolean;
    cookies?: { keys?: string[] };
    /** Whether a refresh token dies with the sign-in session (by default: unless `offline_access` was granted). */
    expiresWithSession?: (ctx: ProviderContext, token: unknown) => boolean | Promise<boolean>;
    /**
     * Client metadata beyond the recognized names, or recognized names to check further: `validator` runs for each
     * listed property whenever a client is built: with the request context at registration, without one for static
     * clients and for registered clients found again in storage. Must be synchronous; throws to refuse.
     */
    extraClientMetadata?: {
      properties: string[];
      validator: (ctx: ProviderContext | undefined, key: string, value: unknown, metadata: Record<string, unknown>) => void;
    };
    features?: Record<string, { enabled: boolean; [key: string]: unknown }>;
    findAccount?: (ctx: unknown, id: string) => Promise<Account | undefined>;
    interactions?: { url?: (ctx: unknown, interaction: Interaction) => string | Promise<string> };
    /** Whether a grant issues a refresh token (by default: the client may use the grant and `offline_access` was granted). */
    issueRefreshToken?: (ctx: ProviderContext, client: ClientModel, code: unknown) => boolean | Promise<boolean>;
    jwks?: { keys: object[] };
    pkce?: { required?: (ctx: unknown, client: unknown) => boolean };
    renderError?: (ctx: RenderContext, out: Record<string, string>, error: Error) => void | Promise<void>;
    /** Whether a refresh token is replaced by a new one each time it is used (by default: for public clients). */
    rotateRefreshToken?: boolean | ((ctx: ProviderContext) => boolean | Promise<boolean>);
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
    on(event: "grant.success", listener: (ctx: ProviderContext) => void): this;
    on(
      event: "grant.error" | "server_error" | "authorization.error" | "registration_create.error",
      listener: (ctx: ProviderContext, error: Error) => void,
    ): this;
    on(event: "registration_create.success", listener: (ctx: ProviderContext, client: ClientModel) => void): this;
    on(event: "access_token.issued", listener: (token: TokenModel) => void): this;
  }

  /** The provider's error classes; a thrown one becomes the OAuth error answer (`error`, `error_description`). */
  export const errors: {
    /** `invalid_redirect_uri` when the description starts with `redirect_uris`, else `invalid_client_metadata`. */
    InvalidClientMetadata: new (description: string) => Error;
    InvalidTarget: new (description?: string) => Error;
  };
}
