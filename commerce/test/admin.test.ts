import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_ENV,
  AdminClient,
  NEW_PASSWORD,
  recoveryCodesOf,
  secretOf,
  totpCode,
} from "./support/admin.ts";
import { type Service, startService } from "./support/harness.ts";

// The admin interface over HTTP, as a browser without JavaScript: sign-in with the initial
// credentials, forced password change, TOTP enrolment, second factor, CSRF, allow-list, hosts,
// rate limit, sessions and what is stored. The pages are in admin-pages.test.ts.

let svc: Service;
let a: AdminClient;
let secret = "";
let recovery: string[] = [];

beforeAll(async () => {
  svc = await startService(ADMIN_ENV);
  a = new AdminClient(svc.url);
});
afterAll(async () => svc?.close());

describe("admin sign-in", () => {
  it("sends a visitor to the sign-in page, with strict security headers", async () => {
    const r = await a.get("/admin/");
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/login");
    const login = await a.get("/admin/login");
    expect(login.status).toBe(200);
    const csp = login.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    expect(login.headers.get("cache-control")).toBe("no-store");
  });

  it("refuses a form posted without its CSRF token", async () => {
    const r = await a.post(
      "/admin/login",
      { username: "owner", password: ADMIN_ENV.ADMIN_PASSWORD },
      { csrf: false },
    );
    expect(r.status).toBe(403);
    expect(r.html).toContain("did not come from this site");
    expect(a.jar.has("__Host-admin_session")).toBe(false);
  });

  it("refuses a wrong password", async () => {
    await a.get("/admin/login");
    const r = await a.post("/admin/login", { username: "owner", password: "wrong" });
    expect(r.status).toBe(401);
    expect(r.html).toContain("Wrong username or password");
  });

  it("forces a password change, then TOTP enrolment, and shows recovery codes once", async () => {
    await a.get("/admin/login");
    const r = await a.post("/admin/login", { username: "owner", password: ADMIN_ENV.ADMIN_PASSWORD });
    expect(r.status).toBe(303);
    expect(r.location).toBe("/admin/setup");
    const setCookie = r.headers.getSetCookie().find((c) => c.startsWith("__Host-admin_session="));
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/Secure/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    // Nothing else is reachable before the setup is done.
    expect((await a.get("/admin/products")).location).toBe("/admin/setup");

    const pw = await a.get("/admin/setup");
    expect(pw.html).toContain("Choose a new password");
    expect((await a.post("/admin/setup/password", { password: "short", confirm: "short" })).status).toBe(422);
    const same = ADMIN_ENV.ADMIN_PASSWORD;
    expect((await a.post("/admin/setup/password", { password: same, confirm: same })).status).toBe(422);
    const ok = await a.post("/admin/setup/password", { password: NEW_PASSWORD, confirm: NEW_PASSWORD });
    expect(ok.location).toBe("/admin/setup");

    const enrol = await a.get("/admin/setup");
    secret = secretOf(enrol.html);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(enrol.html).toContain('src="data:image/svg+xml;base64,');
    expect((await a.post("/admin/setup/totp", { code: "000000" })).status).toBe(422);
    const done = await a.post("/admin/setup/totp", { code: totpCode(secret) });
    expect(done.status).toBe(200);
    recovery = recoveryCodesOf(done.html);
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    expect((await a.get("/admin/")).status).toBe(200);
    // Shown once: the page does not come back.
    expect((await a.get("/admin/setup")).location).toBe("/admin/");
  });

  it("signs out, then needs the password and a second factor; codes are single use", async () => {
    expect((await a.post("/admin/logout", {})).location).toBe("/admin/login");
    expect((await a.get("/admin/")).location).toBe("/admin/login");
    await a.get("/admin/login");
    const r = await a.post("/admin/login", { username: "owner", password: NEW_PASSWORD });
    expect(r.location).toBe("/admin/login/verify");
    expect((await a.get("/admin/")).location).toBe("/admin/login/verify");
    await a.get("/admin/login/verify");
    expect((await a.post("/admin/login/verify", { code: "123456" })).status).toBe(401);
    const used = await a.post("/admin/login/verify", { code: recovery[0]! });
    expect(used.location).toBe("/admin/");
    expect((await a.get("/admin/")).status).toBe(200);

    await a.post("/admin/logout", {});
    await a.get("/admin/login");
    await a.post("/admin/login", { username: "owner", password: NEW_PASSWORD });
    await a.get("/admin/login/verify");
    expect((await a.post("/admin/login/verify", { code: recovery[0]! })).status).toBe(401);
    // The code of the next period (within the allowed drift), computed here.
    expect((await a.post("/admin/login/verify", { code: totpCode(secret, 1) })).location).toBe("/admin/");
  });

  it("rate-limits failed sign-ins per client address", async () => {
    const b = new AdminClient(svc.url);
    b.headers = { "x-forwarded-for": "203.0.113.7" };
    await b.get("/admin/login");
    for (let i = 0; i < 10; i++)
      expect((await b.post("/admin/login", { username: "owner", password: `x${i}` })).status).toBe(401);
    const r = await b.post("/admin/login", { username: "owner", password: NEW_PASSWORD });
    expect(r.status).toBe(429);
    // Another address is not affected.
    const c = new AdminClient(svc.url);
    c.headers = { "x-forwarded-for": "203.0.113.8" };
    await c.get("/admin/login");
    expect((await c.post("/admin/login", { username: "owner", password: NEW_PASSWORD })).location).toBe(
      "/admin/login/verify",
    );
  });
});

describe("admin allow-list", () => {
  it("refuses clients outside COMMERCE_ADMIN_ALLOWED_CIDRS before anything else", async () => {
    const s = await startService({ ...ADMIN_ENV, COMMERCE_ADMIN_ALLOWED_CIDRS: "10.0.0.0/8, 2001:db8::/32" });
    try {
      const out = await fetch(`${s.url}/admin/login`, { headers: { "x-forwarded-for": "198.51.100.4" } });
      expect(out.status).toBe(403);
      const local = await fetch(`${s.url}/admin/login`);
      expect(local.status).toBe(403);
      const inside = await fetch(`${s.url}/admin/login`, { headers: { "x-forwarded-for": "10.1.2.3" } });
      expect(inside.status).toBe(200);
      // The API is not behind the admin's list.
      expect((await s.call("/api/v1/products")).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe("admin hosts", () => {
  it("leads the admin host's root to the admin, and has no admin on the store and API hosts", async () => {
    const s = await startService({
      ...ADMIN_ENV,
      PLATFORM_URL: "https://shop.example.test",
      ADMIN_URL: "https://admin.example.test",
      API_URL: "https://api.example.test",
    });
    try {
      const at = (host: string, url: string) => s.app.app.inject({ url, headers: { host } });
      const root = await at("admin.example.test", "/");
      expect(root.statusCode).toBe(302);
      expect(root.headers.location).toBe("/admin/");
      expect((await at("admin.example.test:443", "/admin/login")).statusCode).toBe(200);
      expect((await at("shop.example.test", "/admin/login")).statusCode).toBe(404);
      expect((await at("api.example.test", "/admin/login")).statusCode).toBe(404);
      expect((await at("shop.example.test", "/")).statusCode).not.toBe(302);
    } finally {
      await s.close();
    }
  });
});

describe("admin sessions and stored secrets", () => {
  it("keeps only hashes, ends idle sessions and issues a new id at each sign-in step", async () => {
    const users = await sql<{ passwordHash: string }>`select password_hash from admin_users`.execute(svc.db);
    expect(users.rows[0]?.passwordHash).toMatch(/^\$argon2id\$/);
    const codes = await sql<{ hash: string }>`select hash from admin_recovery_codes`.execute(svc.db);
    expect(codes.rows).toHaveLength(10);
    expect(codes.rows.map((c) => c.hash).join()).not.toContain(recovery[1]!.replace(/-/g, ""));

    const b = new AdminClient(svc.url);
    await b.get("/admin/login");
    await b.post("/admin/login", { username: "owner", password: NEW_PASSWORD });
    const first = b.jar.get("__Host-admin_session");
    await b.get("/admin/login/verify");
    await b.post("/admin/login/verify", { code: recovery[2]! });
    const second = b.jar.get("__Host-admin_session");
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    expect((await b.get("/admin/")).status).toBe(200);
    const stored = await sql<{ idHash: string }>`select id_hash from admin_sessions`.execute(svc.db);
    expect(stored.rows.map((r) => r.idHash)).not.toContain(second);
    // 31 minutes without a request: the session is over.
    await sql`update admin_sessions set last_seen_at = now() - interval '31 minutes'`.execute(svc.db);
    expect((await b.get("/admin/")).location).toBe("/admin/login");
  });

  it("searches product titles through the trigram index", async () => {
    const plan = await svc.db.connection().execute(async (c) => {
      await sql`set enable_seqscan = off`.execute(c);
      return sql<{ "QUERY PLAN": string }>`explain select id from products where title ilike '%mug%'`.execute(
        c,
      );
    });
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("products_title_trgm");
  });
});
