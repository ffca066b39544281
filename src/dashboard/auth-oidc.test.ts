import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { OidcSignIn, oidcSettingsFrom } from "./auth-oidc.ts";
import { createDashboard } from "./server.ts";
import { SessionStore } from "./sessions.ts";
import { FakeViewerApi } from "./testing.ts";

// OIDC sign-in without a provider: settings, the sign-in page and its CSP, refusals of the
// callback, and the end of a session whose refresh fails. The whole flow against a real provider
// and API server is test/integration/dashboard/oidc.test.ts.

const NOW = new Date("2026-01-05T10:00:00Z");
const ORIGIN = "http://dash.test";
const TOKEN = "token-of-the-viewer-0123456789";
// Nothing listens on port 1: discovery and refresh fail at once.
const DEAD_ISSUER = "https://127.0.0.1:1";

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const oidc = () =>
  new OidcSignIn({
    issuerUrl: DEAD_ISSUER,
    clientId: "cronscale",
    scopes: ["openid"],
    redirectUrl: `${ORIGIN}/dashboard/sign-in/oidc/callback`,
    name: "Shop SSO",
  });

async function start(sessions = new SessionStore(undefined, () => NOW.getTime())) {
  const viewer = new FakeViewerApi({ username: "alice", groups: [] }, new Set(["* * *"]));
  app = await createDashboard({
    log: silentLogger(),
    viewerApi: (token) => (token === TOKEN ? viewer : new FakeViewerApi(undefined, new Set())),
    now: () => NOW,
    sessions,
    oidc: oidc(),
  });
  return app;
}

const cookieOf = (res: { headers: Record<string, unknown> }) =>
  String(res.headers["set-cookie"] ?? "").split(";")[0] ?? "";
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

describe("dashboard: OIDC settings", () => {
  it("are off without an issuer and refuse a half or insecure setup, naming the flag", () => {
    expect(oidcSettingsFrom({})).toBeUndefined();
    expect(() =>
      oidcSettingsFrom({ issuerUrl: "http://idp.test", clientId: "c", redirectUrl: ORIGIN }),
    ).toThrow(/--oidc-issuer-url must be an https URL/);
    expect(() => oidcSettingsFrom({ issuerUrl: "https://idp.test", redirectUrl: ORIGIN })).toThrow(
      /--oidc-client-id is required/,
    );
    expect(() => oidcSettingsFrom({ issuerUrl: "https://idp.test", clientId: "c" })).toThrow(
      /--oidc-redirect-url is required/,
    );
  });

  it("take the post-logout redirect URL as given, else none (the sign-in page on the redirect URL's origin)", async () => {
    const base = {
      issuerUrl: DEAD_ISSUER,
      clientId: "c",
      redirectUrl: `${ORIGIN}/dashboard/sign-in/oidc/callback`,
    };
    expect(oidcSettingsFrom(base)?.postLogoutRedirectUrl).toBeUndefined();
    expect(
      oidcSettingsFrom({ ...base, postLogoutRedirectUrl: `${ORIGIN}/dashboard/sign-in` })
        ?.postLogoutRedirectUrl,
    ).toBe(`${ORIGIN}/dashboard/sign-in`);
    // The provider cannot be reached: no end-session URL, the dashboard's sign-out only.
    expect(await oidc().endSessionUrl("id")).toBeUndefined();
  });

  it("read the client secret from its file, split the scopes and name the provider by its host", () => {
    const dir = mkdtempSync(join(tmpdir(), "oidc-"));
    writeFileSync(join(dir, "secret"), "s3cret\n");
    const s = oidcSettingsFrom({
      issuerUrl: "https://idp.test/realms/shop",
      clientId: "cronscale",
      clientSecretFile: join(dir, "secret"),
      scopes: "openid email,offline_access",
      redirectUrl: `${ORIGIN}/dashboard/sign-in/oidc/callback`,
    });
    expect(s).toMatchObject({
      clientSecret: "s3cret",
      scopes: ["openid", "email", "offline_access"],
      name: "idp.test",
    });
  });
});

describe("dashboard: OIDC sign-in", () => {
  it("offers 'Sign in with' the provider, whose origin the page's form-action allows", async () => {
    const a = await start();
    const page = await a.inject({ method: "GET", url: "/dashboard/sign-in" });
    expect(page.body).toContain("Sign in with Shop SSO");
    expect(page.headers["content-security-policy"]).toContain(`form-action 'self' ${DEAD_ISSUER};`);
  });

  it("starts only with the CSRF token, and says so when the provider cannot be reached", async () => {
    const a = await start();
    const form = await a.inject({ method: "GET", url: "/dashboard/sign-in" });
    const headers = { cookie: cookieOf(form), origin: ORIGIN, host: "dash.test" };
    const forged = await a.inject({ method: "POST", url: "/dashboard/sign-in/oidc", headers, payload: {} });
    expect(forged.statusCode).toBe(403);
    const res = await a.inject({
      method: "POST",
      url: "/dashboard/sign-in/oidc",
      headers,
      payload: { _csrf: csrfOf(form.body) },
    });
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain("Shop SSO could not be reached");
    expect(String(res.headers["set-cookie"] ?? "")).not.toContain("cronscale_oidc=");
  });

  it("refuses a callback this browser did not start, and signs nobody in", async () => {
    const sessions = new SessionStore(undefined, () => NOW.getTime());
    const a = await start(sessions);
    const res = await a.inject({
      method: "GET",
      url: "/dashboard/sign-in/oidc/callback?code=abc&state=xyz",
      headers: { cookie: "cronscale_oidc=made-up" },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("not started in this browser");
    expect(sessions.size).toBe(0);
  });

  it("ends the session when the ID token is due and the refresh fails; a token sign-in is left alone", async () => {
    const sessions = new SessionStore(undefined, () => NOW.getTime());
    const a = await start(sessions);
    const form = await a.inject({ method: "GET", url: "/dashboard/sign-in" });
    const signed = await a.inject({
      method: "POST",
      url: "/dashboard/sign-in",
      headers: { cookie: cookieOf(form), origin: ORIGIN, host: "dash.test" },
      payload: { _csrf: csrfOf(form.body), token: TOKEN },
    });
    const cookie = cookieOf(signed);
    const id = cookie.split("=")[1];
    const tasks = "/dashboard/compute/serverless/tasks";
    expect((await a.inject({ method: "GET", url: tasks, headers: { cookie } })).statusCode).toBe(200);

    // The same session as if signed in through OIDC: still 5 minutes left, nothing happens.
    const s = sessions.get(id);
    if (!s) throw new Error("no session");
    s.oidc = { idToken: "id", refreshToken: "refresh", expiresAt: NOW.getTime() + 5 * 60_000 };
    expect((await a.inject({ method: "GET", url: tasks, headers: { cookie } })).statusCode).toBe(200);
    // 30 s left: refreshed first, which fails (the provider cannot be reached), so signed out.
    s.oidc.expiresAt = NOW.getTime() + 30_000;
    const out = await a.inject({ method: "GET", url: tasks, headers: { cookie } });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe(`/dashboard/sign-in?ended=refresh&next=${encodeURIComponent(tasks)}`);
    expect(sessions.get(id)).toBeUndefined();
    const again = await a.inject({ method: "GET", url: String(out.headers.location) });
    expect(again.body).toContain("the identity provider did not renew it");
  });

  it("signs an OIDC viewer out of the dashboard even when the provider's end-session endpoint cannot be reached", async () => {
    const sessions = new SessionStore(undefined, () => NOW.getTime());
    const a = await start(sessions);
    const form = await a.inject({ method: "GET", url: "/dashboard/sign-in" });
    const signed = await a.inject({
      method: "POST",
      url: "/dashboard/sign-in",
      headers: { cookie: cookieOf(form), origin: ORIGIN, host: "dash.test" },
      payload: { _csrf: csrfOf(form.body), token: TOKEN },
    });
    const cookie = cookieOf(signed);
    const s = sessions.get(cookie.split("=")[1]);
    if (!s) throw new Error("no session");
    s.oidc = { idToken: "id", refreshToken: "refresh", expiresAt: NOW.getTime() + 5 * 60_000 };
    const out = await a.inject({
      method: "POST",
      url: "/dashboard/sign-out",
      headers: { cookie, origin: ORIGIN, host: "dash.test" },
      payload: { _csrf: s.csrf },
    });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe("/dashboard/sign-in");
    expect(sessions.get(s.id)).toBeUndefined();
  });
});
