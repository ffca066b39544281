import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import * as client from "openid-client";
import { Agent, fetch as undiciFetch } from "undici";

// OpenID Connect sign-in (authorization code flow with PKCE, state and nonce) through
// openid-client. The dashboard is only the relying party: the ID token it gets is what it sends to
// the API server as the viewer's bearer token, so the API server itself must trust the issuer
// (its AuthenticationConfiguration `jwt` entry, with the dashboard's client id as audience) and
// maps the token's claims to the Kubernetes user RBAC sees. Tokens stay in this process.

/** How the dashboard reaches the OpenID provider. */
export interface OidcSettings {
  /** The issuer URL (discovery at `<issuer>/.well-known/openid-configuration`). */
  issuerUrl: string;
  clientId: string;
  /** Empty for a public client (PKCE only). */
  clientSecret?: string;
  /** Requested scopes; `openid` is added when missing. */
  scopes: string[];
  /** The public URL of `/dashboard/sign-in/oidc/callback`, registered at the provider. */
  redirectUrl: string;
  /**
   * Where the provider sends the browser after signing the viewer out there (RP-initiated logout),
   * registered at the provider as a post-logout redirect URI; default: the sign-in page, on the
   * origin of `redirectUrl`.
   */
  postLogoutRedirectUrl?: string;
  /** Shown as "Sign in with <name>". */
  name: string;
  /** PEM of CAs to trust for the provider's TLS instead of the system's (a private issuer). */
  caPem?: string;
}

/** An unfinished sign-in: what the callback must match. Kept server-side only. */
interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  next: string;
  at: number;
}

/** The viewer's tokens after a sign-in or a refresh. */
export interface OidcTokens {
  idToken: string;
  refreshToken?: string;
  /** When the ID token expires (ms since the epoch, its `exp`). */
  expiresAt: number;
}

/** Why a sign-in or refresh was refused, in words for the viewer (no token material). */
export class OidcError extends Error {}

const PENDING_TTL_MS = 10 * 60_000;
const PENDING_MAX = 10_000;

/** The relying party: builds authorization URLs, redeems callbacks, refreshes tokens. */
export class OidcSignIn {
  readonly settings: OidcSettings;
  private config?: Promise<client.Configuration>;
  private authorizationOrigin?: string;
  private endSessionOrigin?: string;
  private readonly pending = new Map<string, Pending>();
  private readonly now: () => number;

  constructor(settings: OidcSettings, now: () => number = Date.now) {
    this.settings = settings;
    this.now = now;
  }

  /** The provider's metadata, discovered on first use (again after a failure). */
  private configuration(): Promise<client.Configuration> {
    if (!this.config) {
      const s = this.settings;
      const auth = s.clientSecret ? client.ClientSecretBasic(s.clientSecret) : client.None();
      const options: client.DiscoveryRequestOptions = {};
      if (s.caPem) {
        // Node's global fetch takes no per-request CA; undici's own fetch with an Agent does.
        const agent = new Agent({ connect: { ca: s.caPem } });
        options[client.customFetch] = (url, init) =>
          undiciFetch(url, { ...init, dispatcher: agent } as Parameters<
            typeof undiciFetch
          >[1]) as unknown as Promise<Response>;
      }
      this.config = client.discovery(new URL(s.issuerUrl), s.clientId, undefined, auth, options);
      this.config.then(
        (c) => {
          const { authorization_endpoint: auth, end_session_endpoint: end } = c.serverMetadata();
          if (auth) this.authorizationOrigin = new URL(auth).origin;
          if (end) this.endSessionOrigin = new URL(end).origin;
        },
        () => {
          this.config = undefined;
        },
      );
    }
    return this.config;
  }

  /** Discovers the provider now (at start-up), so a misconfiguration shows in the log early. */
  async discover(): Promise<void> {
    await this.configuration();
  }

  /**
   * Origins the sign-in and sign-out forms may lead to, for the page's CSP `form-action` (browsers
   * apply it to the redirect that follows the form's POST too): the issuer's, its authorization
   * endpoint's and its end-session endpoint's.
   */
  formActionOrigins(): string[] {
    const issuer = new URL(this.settings.issuerUrl).origin;
    return [...new Set([issuer, this.authorizationOrigin ?? issuer, this.endSessionOrigin ?? issuer])];
  }

  /**
   * Where to send the browser to end the viewer's session at the provider too (RP-initiated
   * logout: the provider's `end_session_endpoint` with `id_token_hint`, `client_id` and
   * `post_logout_redirect_uri`); undefined when the provider advertises no such endpoint, or
   * cannot be reached (the dashboard's own session is ended either way).
   */
  async endSessionUrl(idToken: string): Promise<string | undefined> {
    let config: client.Configuration;
    try {
      config = await this.configuration();
    } catch {
      return undefined;
    }
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    return client.buildEndSessionUrl(config, {
      id_token_hint: idToken,
      post_logout_redirect_uri:
        this.settings.postLogoutRedirectUrl ?? new URL("/dashboard/sign-in", this.settings.redirectUrl).href,
    }).href;
  }

  /**
   * Starts a sign-in: a fresh state, nonce and PKCE verifier kept under a random transaction id
   * (for a cookie), and the provider's authorization URL to send the browser to.
   */
  async start(next: string): Promise<{ transaction: string; url: string }> {
    const config = await this.configuration();
    this.sweep();
    const p: Pending = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      next,
      at: this.now(),
    };
    const transaction = randomBytes(32).toString("base64url");
    this.pending.set(transaction, p);
    const scopes = new Set(["openid", ...this.settings.scopes]);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: [...scopes].join(" "),
      response_type: "code",
      state: p.state,
      nonce: p.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(p.verifier),
      code_challenge_method: "S256",
    });
    return { transaction, url: url.href };
  }

  /**
   * Redeems the provider's redirect to the callback. The transaction is used once whatever the
   * outcome; openid-client checks the state, the code with the PKCE verifier, and the ID token's
   * signature, issuer, audience, expiry and nonce.
   */
  async finish(transaction: string | undefined, callbackUrl: URL): Promise<OidcTokens & { next: string }> {
    const p = transaction ? this.pending.get(transaction) : undefined;
    if (transaction) this.pending.delete(transaction);
    if (!p || this.now() - p.at > PENDING_TTL_MS) {
      throw new OidcError("This sign-in was not started in this browser, or it took too long. Start again.");
    }
    const providerError = callbackUrl.searchParams.get("error");
    if (providerError) {
      const why = callbackUrl.searchParams.get("error_description") ?? providerError;
      throw new OidcError(`The identity provider refused the sign-in: ${why}`);
    }
    const config = await this.configuration();
    let r: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      r = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: p.verifier,
        expectedState: p.state,
        expectedNonce: p.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw new OidcError(`The sign-in response was refused: ${(err as Error).message}`, { cause: err });
    }
    return { ...tokensOf(r, undefined), next: p.next };
  }

  /** New tokens from the refresh token; the provider must return a new ID token. */
  async refresh(refreshToken: string): Promise<OidcTokens> {
    const config = await this.configuration();
    const r = await client.refreshTokenGrant(config, refreshToken);
    if (!r.id_token) throw new OidcError("The identity provider's refresh gave no ID token.");
    return tokensOf(r, refreshToken);
  }

  /** Unfinished sign-ins held (tests, metrics). */
  get pendingCount(): number {
    return this.pending.size;
  }

  private sweep(): void {
    const t = this.now();
    for (const [id, p] of this.pending) {
      if (t - p.at > PENDING_TTL_MS || this.pending.size > PENDING_MAX) this.pending.delete(id);
    }
  }
}

function tokensOf(
  r: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
  previousRefresh: string | undefined,
): OidcTokens {
  const idToken = r.id_token;
  const exp = r.claims()?.exp;
  if (!idToken || typeof exp !== "number") throw new OidcError("The identity provider returned no ID token.");
  // A provider that does not rotate refresh tokens keeps the one it gave first.
  return { idToken, refreshToken: r.refresh_token ?? previousRefresh, expiresAt: exp * 1000 };
}

/** Reads settings from flags/env: undefined when no issuer is configured; throws on a half setup. */
export function oidcSettingsFrom(v: {
  issuerUrl?: string;
  clientId?: string;
  clientSecret?: string;
  clientSecretFile?: string;
  scopes?: string;
  redirectUrl?: string;
  postLogoutRedirectUrl?: string;
  name?: string;
  caFile?: string;
}): OidcSettings | undefined {
  if (!v.issuerUrl) return undefined;
  const need = (value: string | undefined, flag: string) => {
    if (!value) throw new Error(`--${flag} is required with --oidc-issuer-url`);
    return value;
  };
  const issuer = new URL(v.issuerUrl);
  if (issuer.protocol !== "https:") throw new Error("--oidc-issuer-url must be an https URL");
  const secret = v.clientSecretFile ? readFileSync(v.clientSecretFile, "utf8").trim() : v.clientSecret;
  return {
    issuerUrl: v.issuerUrl,
    clientId: need(v.clientId, "oidc-client-id"),
    clientSecret: secret || undefined,
    scopes: (v.scopes || "openid profile email").split(/[\s,]+/).filter(Boolean),
    redirectUrl: new URL(need(v.redirectUrl, "oidc-redirect-url")).href,
    postLogoutRedirectUrl: v.postLogoutRedirectUrl ? new URL(v.postLogoutRedirectUrl).href : undefined,
    name: v.name || issuer.host,
    caPem: v.caFile ? readFileSync(v.caFile, "utf8") : undefined,
  };
}
