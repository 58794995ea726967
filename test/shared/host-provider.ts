// An OAuth client provider kept in memory, as a host keeps one (the v2 SDK's `OAuthClientProvider`; the v1 client
// takes it too): registration, tokens, the PKCE verifier and the discovery state survive the redirect, and
// `redirectToAuthorization` only records the URL, for the test to sign in with. Works in Node and in workerd.
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";

export interface HostProviderOptions {
  /** The host's client name (what the consent page shows). */
  name: string;
  /** Where the authorization server sends the browser back. */
  redirectUri: string;
  /** A `state` the host sends and checks itself (the SDK does not check it at the callback). */
  state?: string;
  /** A client ID metadata document URL: the host names itself by it instead of registering. */
  clientMetadataUrl?: string;
  /** A client registered beforehand. */
  client?: StoredOAuthClientInformation;
  /** Ask for a token for this resource instead of the server's own (tests of audience checks). */
  resource?: string;
}

export class HostProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  stored: StoredOAuthTokens | undefined;
  discovery: OAuthDiscoveryState | undefined;
  verifier = "";
  /** Every authorization URL the client asked the browser to open, in order. */
  readonly authorizations: URL[] = [];
  readonly clientMetadataUrl?: string;
  readonly validateResourceURL?: (serverUrl: string | URL, resource?: string) => Promise<URL | undefined>;
  readonly #options: HostProviderOptions;

  constructor(options: HostProviderOptions) {
    this.#options = options;
    this.client = options.client;
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
    const resource = options.resource;
    if (resource !== undefined) this.validateResourceURL = async () => new URL(resource);
  }

  get redirectUrl(): string {
    return this.#options.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.#options.name,
      redirect_uris: [this.#options.redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state(): string {
    return this.#options.state ?? crypto.randomUUID();
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  // v2 checks at the callback that the code came from the server discovery found (SEP-2352).
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.client = undefined;
    if (scope === "all" || scope === "tokens") this.stored = undefined;
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
}
