import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { createServer } from "node:net";
import type { FastifyInstance } from "fastify";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OidcSignIn } from "../../../src/dashboard/auth-oidc.ts";
import { KubeViewerApi } from "../../../src/dashboard/kube.ts";
import { createDashboard } from "../../../src/dashboard/server.ts";
import { SessionStore } from "../../../src/dashboard/sessions.ts";
import { silentLogger } from "../../../src/log.ts";
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  newContext,
  screenshots,
  seriousA11yViolations,
} from "../../support/browser.ts";
import { hasClusterEnv, kubeConfig, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import {
  startOidcProvider,
  type TestOidcProvider,
  type TrustedIssuer,
  trustIssuer,
} from "../../support/oidc.ts";
import { installCrds } from "../scheduledtask/operator.ts";

// OpenID Connect sign-in end to end: a real provider (oidc-provider) on loopback over TLS, the
// local cluster's API server made to trust it through its AuthenticationConfiguration (reloaded
// at run time), the dashboard in this process as the relying party (openid-client), and
// Chromium going through the provider's login. The viewer's ID token is the bearer of every API
// call, so what the page shows is what RBAC grants the OIDC user "oidc:alice".

const ns = useNamespace("oidc");
const other = useNamespace("oidc-other");
const TASKS = "/dashboard/compute/serverless/tasks";
const CLIENT_ID = "cronscale-dashboard";
const CLIENT_SECRET = randomBytes(24).toString("base64url");
const ID_TOKEN_TTL = 120;
let provider: TestOidcProvider;
let trusted: TrustedIssuer | undefined;
let app: FastifyInstance;
let base = "";
let browser: Browser;
const sessions = new SessionStore();
/** Requests Chromium tried to send off loopback (must stay empty). */
const offLoopback: string[] = [];

const task = (name: string) =>
  JSON.stringify({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScheduledTask",
    metadata: { name },
    spec: { schedule: "0 3 * * *", language: "Bash", plan: "Micro", timeoutSeconds: 60, script: "true" },
  });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });
}

describe.skipIf(!hasClusterEnv())("dashboard OIDC sign-in", () => {
  beforeAll(async () => {
    await installCrds();
    const port = await freePort();
    // localhost: a secure context, where Chromium keeps the Secure cookies over plain HTTP.
    base = `http://localhost:${port}`;
    const redirectUrl = `${base}/dashboard/sign-in/oidc/callback`;
    provider = await startOidcProvider({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: redirectUrl,
      postLogoutRedirectUri: `${base}/dashboard/sign-in`,
      accounts: { alice: { password: "alice-password", email: "alice@example.test" } },
      idTokenTtl: ID_TOKEN_TTL,
    });
    trusted = await trustIssuer(provider, CLIENT_ID, "oidc:");
    console.log(`the API server applied the new issuer after ${trusted.appliedAfterMs} ms`);
    await kubectl(["apply", "-f", "-"], {
      input: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: oidc-reader, namespace: ${ns.name}}
rules:
  - {apiGroups: [cronscale.io], resources: [scheduledtasks, taskexecutions], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: oidc-alice, namespace: ${ns.name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: oidc-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "oidc:alice"}]
`,
    });
    await kubectl(["apply", "-f", "-"], { namespace: ns.name, input: task("visible-task") });
    await kubectl(["apply", "-f", "-"], { namespace: other.name, input: task("hidden-task") });
    await waitFor(
      async () =>
        (
          await kubectl(["auth", "can-i", "list", "scheduledtasks.cronscale.io", "--as=oidc:alice"], {
            namespace: ns.name,
            allowFailure: true,
          })
        ).stdout.trim() === "yes",
      { timeoutMs: 30_000, what: "RBAC for oidc:alice" },
    );
    const kc = kubeConfig();
    app = await createDashboard({
      log: silentLogger(),
      namespaces: [ns.name, other.name],
      sessions,
      oidc: new OidcSignIn({
        issuerUrl: provider.issuer,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        scopes: ["openid", "profile", "email"],
        redirectUrl,
        name: "Test IdP",
        caPem: provider.caPem,
      }),
      // The ID token lives 120 s; refreshed once less than 115 s is left, so after 5 s.
      oidcRefreshBeforeMs: (ID_TOKEN_TTL - 5) * 1000,
      viewerApi: (token) => new KubeViewerApi(kc, token),
    });
    await app.listen({ host: "127.0.0.1", port });
    // Chromium trusts exactly the provider's key (its certificate comes from a throwaway CA).
    const spki = new X509Certificate(provider.certPem).publicKey.export({ type: "spki", format: "der" });
    const pin = createHash("sha256").update(spki).digest("base64");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${pin}`],
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await trusted?.remove();
    await provider?.close();
  });

  /** A browser context whose requests may only go to loopback (others are aborted and recorded). */
  async function context(): Promise<BrowserContext> {
    const ctx = await newContext(browser);
    await ctx.route("**/*", (route) => {
      const host = new URL(route.request().url()).hostname;
      if (host === "localhost" || host === "127.0.0.1") return route.continue();
      offLoopback.push(route.request().url());
      return route.abort();
    });
    return ctx;
  }

  /** From a dashboard page through the provider's login back to the dashboard. */
  async function signIn(page: Page): Promise<void> {
    await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    expect(await seriousA11yViolations(page), "axe on the sign-in page").toEqual([]);
    await screenshots(page, "oidc-sign-in");
    await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
    await page.waitForURL(`${provider.issuer}/interaction/**`);
    await page.getByLabel("Login").fill("alice");
    await page.getByLabel("Password").fill("alice-password");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
  }

  const sessionOf = async (ctx: BrowserContext) => {
    const id = (await ctx.cookies(`${base}/dashboard/`)).find((c) => c.name === "cronscale_session")?.value;
    return sessions.get(id);
  };

  it("signs in through the provider as the OIDC user and sees only what RBAC grants; a forbidden action gets the API server's 403; the ID token is refreshed; sign-out ends the session there and at the provider", async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page);
    expect((await page.locator(".who").textContent())?.trim()).toBe("oidc:alice");
    await page.getByText("visible-task").first().waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);

    const s = await sessionOf(ctx);
    const idToken = s?.oidc?.idToken ?? "";
    expect(idToken.split(".")).toHaveLength(3);
    expect(s?.oidc?.refreshToken).toBeTruthy();
    // The tokens stay on the server: not in the page, not readable by its script.
    expect(await page.content()).not.toContain(idToken);
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const cookie = (await ctx.cookies(`${base}/dashboard/`)).find((c) => c.name === "cronscale_session");
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict" });

    // No create control (alice may only read), and the other namespace is neither offered nor listed.
    expect(await page.getByRole("link", { name: "New Task" }).count()).toBe(0);
    expect(await page.locator("select[name=namespace] option").allTextContents()).not.toContain(other.name);
    const refused = await page.goto(`${base}${TASKS}?namespace=${other.name}`);
    expect(refused?.status()).toBe(403);
    await page.getByText(`User "oidc:alice" cannot list resource "scheduledtasks"`).first().waitFor();
    expect(await page.getByText("hidden-task").count()).toBe(0);

    // A forged delete goes to the API server as alice and comes back as its 403.
    await page.goto(`${base}${TASKS}/${ns.name}/visible-task`);
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(`${base}${TASKS}/${ns.name}/visible-task/delete`, {
      headers: { Origin: base },
      form: { _csrf: csrf },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toMatch(
      /User &quot;oidc:alice&quot; cannot delete|User "oidc:alice" cannot delete/,
    );
    await kubectl(["get", "scheduledtask", "visible-task"], { namespace: ns.name });

    // Past the refresh point the next request gets a new ID token from the refresh token.
    await new Promise((r) => setTimeout(r, 6000));
    await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
    await page.getByText("visible-task").first().waitFor();
    const refreshed = (await sessionOf(ctx))?.oidc?.idToken;
    expect(refreshed).toBeTruthy();
    expect(refreshed).not.toBe(idToken);

    // Sign-out ends the session on the server and, through the provider's end-session endpoint
    // (the ID token as hint), the provider's own session; the provider sends the browser back.
    const oldId = cookie?.value ?? "";
    const providerCookies = async () => (await ctx.cookies(provider.issuer)).map((c) => c.name);
    expect(await providerCookies()).toContain("_session");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(`${provider.issuer}/session/end**`);
    expect(sessions.get(oldId)).toBeUndefined();
    await page.getByRole("button", { name: "Yes, sign me out" }).click();
    await page.waitForURL(`${base}/dashboard/sign-in`);
    expect(await providerCookies()).not.toContain("_session");
    // The old cookie no longer opens a page.
    await ctx.addCookies([{ name: "cronscale_session", value: oldId, url: `${base}/dashboard` }]);
    await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    // Signing in again asks for the provider's login again (its session is gone), then works.
    await page.getByRole("button", { name: "Sign in with Test IdP" }).click();
    await page.waitForURL(`${provider.issuer}/interaction/**`);
    await page.getByLabel("Login").fill("alice");
    await page.getByLabel("Password").fill("alice-password");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
    expect((await page.locator(".who").textContent())?.trim()).toBe("oidc:alice");
    await ctx.close();
    expect(offLoopback).toEqual([]);
  });

  it("refuses a callback with a tampered state and one from another browser's sign-in", async () => {
    // Browser A starts a sign-in and logs in at the provider, but the provider's redirects are
    // followed by hand (with A's cookies), so its callback URL is held back, not yet redeemed.
    const a = await context();
    const pageA = await a.newPage();
    await pageA.goto(`${base}/dashboard/sign-in`);
    await pageA.getByRole("button", { name: "Sign in with Test IdP" }).click();
    await pageA.waitForURL(`${provider.issuer}/interaction/**`);
    let hop = await a.request.post(pageA.url(), {
      form: { login: "alice", password: "alice-password" },
      maxRedirects: 0,
      // Node's side of Playwright, not Chromium: the provider's test CA is not in its trust store.
      ignoreHTTPSErrors: true,
    });
    let url = new URL(hop.headers().location ?? "", hop.url());
    while (hop.status() === 303 && !url.pathname.endsWith("/oidc/callback")) {
      hop = await a.request.get(url.href, { maxRedirects: 0, ignoreHTTPSErrors: true });
      url = new URL(hop.headers().location ?? "", hop.url());
    }
    expect(url.pathname).toBe("/dashboard/sign-in/oidc/callback");
    expect(url.searchParams.get("code")).toBeTruthy();

    // The same browser with the state changed: refused, and the sign-in is used up.
    const tampered = new URL(url);
    tampered.searchParams.set("state", `${url.searchParams.get("state")}x`);
    const r1 = await pageA.goto(tampered.href);
    expect(r1?.status()).toBe(400);
    await pageA.getByRole("heading", { name: "Sign-in failed" }).first().waitFor();
    expect(await seriousA11yViolations(pageA), "axe on the refusal page").toEqual([]);
    await screenshots(pageA, "oidc-refused");
    expect(await pageA.content()).not.toContain(url.searchParams.get("code") ?? "-");
    const r2 = await pageA.goto(url.href);
    expect(r2?.status()).toBe(400);

    // Browser B (its own sign-in started, so it has a transaction cookie) opens A's callback: refused.
    const b = await context();
    const pageB = await b.newPage();
    await b.route(`${provider.issuer}/**`, (route) => route.abort());
    await pageB.goto(`${base}/dashboard/sign-in`);
    await pageB
      .getByRole("button", { name: "Sign in with Test IdP" })
      .click()
      .catch(() => undefined);
    const r3 = await pageB.goto(url.href);
    expect(r3?.status()).toBe(400);
    expect(await pageB.getByRole("alert").textContent()).toMatch(/refused|not started in this browser/);
    for (const ctx of [a, b]) {
      await ctx.request.get(`${base}${TASKS}`, { maxRedirects: 0 }).then((r) => expect(r.status()).toBe(303));
      await ctx.close();
    }
    expect(offLoopback).toEqual([]);
  });

  it("signs the viewer out when the provider refuses the refresh (account removed)", async () => {
    const ctx = await context();
    const page = await ctx.newPage();
    await signIn(page);
    expect((await page.locator(".who").textContent())?.trim()).toBe("oidc:alice");
    const before = await sessionOf(ctx);
    expect(before?.user?.username).toBe("oidc:alice");
    provider.deleteAccount("alice");
    await new Promise((r) => setTimeout(r, 6000));
    await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await page.getByText("the identity provider did not renew it").first().waitFor();
    expect(sessions.get(before?.id)).toBeUndefined();
    expect((await sessionOf(ctx))?.user).toBeUndefined();
    await ctx.close();
    expect(offLoopback).toEqual([]);
  });
});
