import { createHash, randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import Provider from "oidc-provider";
import { clusterEnv, kubectl, waitFor } from "./cluster.ts";
import { makeTestTls } from "./tls.ts";

// A real OpenID provider (oidc-provider) run by the test on loopback over TLS (a throwaway CA),
// with its own small login page and password check, and the local cluster's API server made to
// trust it at run time through its AuthenticationConfiguration file (hack/cluster/up.sh passes
// --authentication-config; the API server watches the file and applies a new version once the
// new issuer answers discovery, without a restart).

/** One user of the test provider. */
export interface TestAccount {
  password: string;
  email: string;
}

/** A running test provider. */
export interface TestOidcProvider {
  /** https://127.0.0.1:PORT */
  issuer: string;
  /** PEM of the CA that signed the provider's certificate. */
  caPem: string;
  /** The provider's certificate (for Chromium's --ignore-certificate-errors-spki-list). */
  certPem: string;
  /** Removes an account: its refresh tokens stop working (the provider finds no account). */
  deleteAccount(login: string): void;
  close(): Promise<void>;
}

/**
 * Starts the provider with one confidential client allowed `redirectUri` and refresh tokens, and
 * RP-initiated logout (its `end_session_endpoint`, confirmed on its own page, then back to
 * `postLogoutRedirectUri`).
 */
export async function startOidcProvider(opts: {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  postLogoutRedirectUri?: string;
  accounts: Record<string, TestAccount>;
  /** Lifetime of ID tokens, seconds. */
  idTokenTtl: number;
}): Promise<TestOidcProvider> {
  const tls = makeTestTls();
  const accounts = new Map(Object.entries(opts.accounts));
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server = createServer(
    { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
    (req, res) => handler(req, res),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: opts.clientId,
        client_secret: opts.clientSecret,
        redirect_uris: [opts.redirectUri],
        post_logout_redirect_uris: opts.postLogoutRedirectUri ? [opts.postLogoutRedirectUri] : [],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: "test", alg: "RS256", use: "sig" }] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    features: {
      devInteractions: { enabled: false },
      // The provider's own pages load nothing from elsewhere (the default ones use a web font).
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.body = page(`<h1>Sign out of the test provider?</h1>${form}
            <button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`);
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.body = page("<h1>Signed out of the test provider</h1>");
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // Like most providers, a refresh token for every client allowed the grant (not only with
    // offline_access and prompt=consent, oidc-provider's default).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: {
      IdToken: opts.idTokenTtl,
      AccessToken: opts.idTokenTtl,
      RefreshToken: 3600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    findAccount: async (_ctx, id) => {
      const a = accounts.get(id);
      if (!a) return undefined;
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: a.email, email_verified: true, name: id }),
      };
    },
  });
  const callback = provider.callback();
  handler = (req, res) => {
    if (req.url?.startsWith("/interaction/")) {
      interaction(provider, accounts, req, res).catch((err: Error) => {
        res.statusCode = 500;
        res.end(err.message);
      });
      return;
    }
    callback(req, res);
  };
  return {
    issuer,
    caPem: readFileSync(tls.caFile, "utf8"),
    certPem: readFileSync(tls.certFile, "utf8"),
    deleteAccount: (login) => accounts.delete(login),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      tls.remove();
    },
  };
}

const page = (body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider</title></head><body>${body}</body></html>`;

/** The provider's login page: a login and password, checked; consent is given with the login. */
async function interaction(
  provider: Provider,
  accounts: Map<string, TestAccount>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const form = (error = "") =>
    page(`<h1>Test provider</h1>${error ? `<p role="alert">${error}</p>` : ""}
      <form method="post" action="/interaction/${details.uid}">
        <label for="login">Login</label><input id="login" name="login" autocomplete="off">
        <label for="password">Password</label><input id="password" name="password" type="password">
        <button type="submit">Log in</button>
      </form>`);
  res.setHeader("Content-Type", "text/html; charset=utf-8");
  if (req.method !== "POST") {
    res.end(form());
    return;
  }
  let raw = "";
  for await (const chunk of req) raw += chunk;
  const body = new URLSearchParams(raw);
  const login = body.get("login") ?? "";
  const account = accounts.get(login);
  if (!account || account.password !== body.get("password")) {
    res.statusCode = 401;
    res.end(form("Wrong login or password."));
    return;
  }
  const grant = new provider.Grant({ accountId: login, clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: login }, consent: { grantId } });
}

/** The API server's trust in a test issuer, undone by `remove()`. */
export interface TrustedIssuer {
  remove(): Promise<void>;
  /** How long the API server took to apply the new configuration. */
  appliedAfterMs: number;
}

/**
 * Adds `issuer` to the local cluster's AuthenticationConfiguration (usernames: `prefix` + `sub`,
 * audience `clientId`, the provider's CA) and waits until the API server reports that exact file
 * applied (the sha256 of the file in apiserver_authentication_config_controller_last_config_info).
 */
export async function trustIssuer(
  p: TestOidcProvider,
  clientId: string,
  prefix: string,
): Promise<TrustedIssuer> {
  const path = clusterEnv().AUTHENTICATION_CONFIG;
  if (!path)
    throw new Error("cluster.env has no AUTHENTICATION_CONFIG: the cluster predates it (hack/cluster/up.sh)");
  const original = readFileSync(path, "utf8");
  const config = {
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AuthenticationConfiguration",
    jwt: [
      {
        issuer: { url: p.issuer, audiences: [clientId], certificateAuthority: p.caPem },
        claimMappings: { username: { claim: "sub", prefix } },
      },
    ],
  };
  const t0 = Date.now();
  await applyConfig(path, `${JSON.stringify(config, null, 2)}\n`);
  return {
    appliedAfterMs: Date.now() - t0,
    remove: () => applyConfig(path, original),
  };
}

async function applyConfig(path: string, text: string): Promise<void> {
  writeFileSync(path, text);
  const hash = `sha256:${createHash("sha256").update(text).digest("hex")}`;
  // The new issuers must answer discovery first; the API server retries every 10 s.
  try {
    await waitFor(
      async () => {
        const m = (await kubectl(["get", "--raw", "/metrics"])).stdout;
        return m
          .split("\n")
          .some(
            (l) =>
              l.startsWith("apiserver_authentication_config_controller_last_config_info") && l.includes(hash),
          );
      },
      {
        timeoutMs: 60_000,
        intervalMs: 1000,
        what: "the API server to apply the authentication configuration",
      },
    );
  } catch (err) {
    // The API server's own words on why (an unreachable issuer, a bad CA, a rejected field).
    const log = readFileSync(`${clusterEnv().STATE_DIR}/logs/kube-apiserver.log`, "utf8")
      .split("\n")
      .filter((l) => /authentication config/i.test(l))
      .slice(-3)
      .join("\n");
    throw new Error(`${(err as Error).message}\n${log}`);
  }
}
