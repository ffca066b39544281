import { generateKeyPair, SignJWT } from "jose";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, freshDatabase, type Service, startService } from "./support/harness.ts";

describe("authentication and scopes", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ API_URL: "https://api.shop.test/api/v1/" });
  });
  afterAll(() => svc.close());

  it("401 with WWW-Authenticate: Bearer without or with a wrong credential", async () => {
    const none = await svc.call("/api/v1/products", { key: null });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer /);
    expect(none.headers.get("content-type")).toMatch(/application\/problem\+json/);
    const wrong = await svc.call("/api/v1/products", { key: "csk_notakey000000000000000000" });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    const basic = await svc.call("/api/v1/products", { headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(basic.status).toBe(401);
  });

  it("issues scoped API keys shown once, stored hashed, with last-used time, revocable", async () => {
    const created = await svc.call("/api/v1/api-keys", {
      method: "POST",
      json: { name: "catalog sync", scopes: ["products:read"] },
    });
    expect(created.status).toBe(201);
    const k = await body(created);
    expect(k.key).toMatch(/^csk_[A-Za-z0-9]{40}$/);
    const stored = await sql<{ hash: string }>`select hash from api_keys where id = ${k.id}`.execute(svc.db);
    expect(stored.rows[0]?.hash).not.toContain(k.key);
    expect(stored.rows[0]?.hash).toMatch(/^[0-9a-f]{64}$/);

    expect((await svc.call("/api/v1/products", { key: k.key })).status).toBe(200);
    const denied = await svc.call("/api/v1/products", { method: "POST", key: k.key, json: {} });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toMatch(
      /error="insufficient_scope", scope="products:write"/,
    );
    expect((await body(denied)).detail).toMatch(/lacks the scope products:write/);
    // Managing keys needs the full-access key.
    expect((await svc.call("/api/v1/api-keys", { key: k.key })).status).toBe(403);

    const list = await body(await svc.call("/api/v1/api-keys"));
    const mine = list.data.find((x: { id: string }) => x.id === k.id);
    expect(mine.key).toBeUndefined();
    expect(mine.prefix).toBe(k.key.slice(0, 10));
    expect(Date.parse(mine.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);

    expect((await svc.call(`/api/v1/api-keys/${k.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await svc.call("/api/v1/products", { key: k.key })).status).toBe(401);
  });

  it("a resource wildcard grants read and write of that resource only", async () => {
    const k = await body(
      await svc.call("/api/v1/api-keys", { method: "POST", json: { name: "w", scopes: ["products:*"] } }),
    );
    expect((await svc.call("/api/v1/products", { key: k.key })).status).toBe(200);
    expect((await svc.call("/api/v1/products/none", { method: "DELETE", key: k.key })).status).toBe(404);
    expect((await svc.call("/api/v1/api-keys", { key: k.key })).status).toBe(403);
    const bad = await svc.call("/api/v1/api-keys", {
      method: "POST",
      json: { name: "x", scopes: ["everything"] },
    });
    expect(bad.status).toBe(422);
    expect((await body(bad)).errors[0].pointer).toBe("#/scopes/0");
  });
});

describe("OAuth 2.0 client credentials and JWT access tokens", () => {
  let svc: Service;
  let client: { id: string; clientSecret: string };
  const token = async (init: RequestInit) => svc.call("/oauth/token", { key: null, method: "POST", ...init });
  const form = (o: Record<string, string>) => ({
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(o).toString(),
  });

  beforeAll(async () => {
    svc = await startService({ API_URL: "https://api.shop.test/api/v1/" });
    client = await body(
      await svc.call("/api/v1/oauth-clients", {
        method: "POST",
        json: { name: "erp", scopes: ["orders:read", "products:read"] },
      }),
    );
  });
  afterAll(() => svc.close());

  it("issues an RFC 9068 token with client_secret_basic, accepted by the API within its scopes", async () => {
    const basic = Buffer.from(
      `${encodeURIComponent(client.id)}:${encodeURIComponent(client.clientSecret)}`,
    ).toString("base64");
    const r = await token({
      ...form({ grant_type: "client_credentials", scope: "products:read" }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${basic}`,
      },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get("cache-control")).toBe("no-store");
    const t = await body(r);
    expect(t).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "products:read" });
    const [h, p] = t.access_token
      .split(".")
      .slice(0, 2)
      .map((s: string) => JSON.parse(Buffer.from(s, "base64url").toString()));
    expect(h).toMatchObject({ alg: "ES256", typ: "at+jwt" });
    expect(p).toMatchObject({
      iss: "https://api.shop.test",
      aud: "https://api.shop.test",
      sub: client.id,
      client_id: client.id,
      scope: "products:read",
    });
    expect(p.exp - p.iat).toBeLessThanOrEqual(3600);
    expect(p.jti).toBeTruthy();

    expect((await svc.call("/api/v1/products", { key: t.access_token })).status).toBe(200);
    const denied = await svc.call("/api/v1/products", { method: "POST", json: {}, key: t.access_token });
    expect(denied.status).toBe(403);

    const jwks = await body(await svc.call("/.well-known/jwks.json", { key: null }));
    expect(jwks.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", kid: h.kid, alg: "ES256" });
    expect(jwks.keys[0].d).toBeUndefined();
  });

  it("issues a token with client_secret_post; refuses wrong secrets, other grants, ungranted scopes", async () => {
    const ok = await token(
      form({ grant_type: "client_credentials", client_id: client.id, client_secret: client.clientSecret }),
    );
    expect(ok.status).toBe(200);
    expect((await body(ok)).scope).toBe("orders:read products:read");
    const wrong = await token(
      form({ grant_type: "client_credentials", client_id: client.id, client_secret: "nope" }),
    );
    expect(wrong.status).toBe(401);
    expect((await body(wrong)).error).toBe("invalid_client");
    const grant = await token(
      form({ grant_type: "password", client_id: client.id, client_secret: client.clientSecret }),
    );
    expect((await body(grant)).error).toBe("unsupported_grant_type");
    const scope = await token(
      form({
        grant_type: "client_credentials",
        client_id: client.id,
        client_secret: client.clientSecret,
        scope: "orders:write",
      }),
    );
    expect(scope.status).toBe(400);
    expect((await body(scope)).error).toBe("invalid_scope");
  });

  it("refuses expired, foreign-signed, tampered and foreign-issuer tokens, and tokens of a revoked client", async () => {
    const good = (
      await body(
        await token(
          form({
            grant_type: "client_credentials",
            client_id: client.id,
            client_secret: client.clientSecret,
          }),
        ),
      )
    ).access_token as string;
    const [h, p, s] = good.split(".") as [string, string, string];

    const payload = JSON.parse(Buffer.from(p, "base64url").toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, scope: "*" })).toString("base64url")}.${s}`;
    const r1 = await svc.call("/api/v1/products", { key: tampered });
    expect(r1.status).toBe(401);
    expect(r1.headers.get("www-authenticate")).toMatch(/invalid_token/);

    const foreign = await generateKeyPair("ES256");
    const header = JSON.parse(Buffer.from(h, "base64url").toString());
    const sign = (claims: Record<string, unknown>, key = foreign.privateKey, iss = "https://api.shop.test") =>
      new SignJWT(claims)
        .setProtectedHeader(header)
        .setIssuer(iss)
        .setAudience("https://api.shop.test")
        .setSubject(client.id)
        .setIssuedAt()
        .setExpirationTime("10m")
        .sign(key);
    const base = { client_id: client.id, scope: "products:read" };
    expect((await svc.call("/api/v1/products", { key: await sign(base) })).status).toBe(401);

    // Our own key, but expired or of another issuer: sign with the stored private key.
    const { rows } = await sql<{
      privateJwk: object;
    }>`select private_jwk as "privateJwk" from signing_keys`.execute(svc.db);
    const { importJWK } = await import("jose");
    const ours = await importJWK(rows[0]!.privateJwk as never, "ES256");
    expect((await svc.call("/api/v1/products", { key: await sign(base, ours as never) })).status).toBe(200);
    const expired = await new SignJWT(base)
      .setProtectedHeader(header)
      .setIssuer("https://api.shop.test")
      .setAudience("https://api.shop.test")
      .setSubject(client.id)
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(ours);
    const r2 = await svc.call("/api/v1/products", { key: expired });
    expect(r2.status).toBe(401);
    expect((await body(r2)).detail).toMatch(/exp/);
    expect(
      (await svc.call("/api/v1/products", { key: await sign(base, ours as never, "https://evil.test") }))
        .status,
    ).toBe(401);

    expect((await svc.call(`/api/v1/oauth-clients/${client.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await svc.call("/api/v1/products", { key: good })).status).toBe(401);
  });
});

describe("issued API keys across replicas", () => {
  let replicas: Service[];
  beforeAll(async () => {
    const url = await freshDatabase();
    replicas = [await startService({}, url), await startService({}, url), await startService({}, url)];
  });
  afterAll(() => Promise.all(replicas.map((r) => r.close())));

  it("are served from each replica's cache, and a revoked key is refused on every replica within 1 s", async () => {
    const k = await body(
      await replicas[0]!.call("/api/v1/api-keys", {
        method: "POST",
        json: { name: "sync", scopes: ["products:read"] },
      }),
    );
    for (const r of replicas) expect((await r.call("/api/v1/products", { key: k.key })).status).toBe(200);
    // Cached: a second use on each replica does not read the table.
    const lookups = async () => {
      const m = await replicas[0]!.app.app.inject({ url: "/metrics" });
      return [...m.body.matchAll(/^commerce_api_key_cache_requests_total\{result="(\w+)"\} (\d+)/gm)];
    };
    const hits = async () => (await lookups()).find((m) => m[1] === "hit")?.[2];
    const before = Number((await hits()) ?? 0);
    for (let i = 0; i < 5; i++) await replicas[0]!.call("/api/v1/products", { key: k.key });
    expect(Number(await hits())).toBe(before + 5);

    const revokedAt = Date.now();
    expect((await replicas[1]!.call(`/api/v1/api-keys/${k.id}`, { method: "DELETE" })).status).toBe(204);
    const refusedAfter = await Promise.all(
      replicas.map(async (r) => {
        for (;;) {
          if ((await r.call("/api/v1/products", { key: k.key })).status === 401)
            return Date.now() - revokedAt;
          if (Date.now() - revokedAt > 5_000) return Number.POSITIVE_INFINITY;
          await new Promise((res) => setTimeout(res, 20));
        }
      }),
    );
    for (const ms of refusedAfter) expect(ms).toBeLessThan(1_000);
  });

  it("keep the last-used time at minute precision without a write per request", async () => {
    const k = await body(
      await replicas[0]!.call("/api/v1/api-keys", { method: "POST", json: { name: "u", scopes: ["*"] } }),
    );
    expect((await replicas[2]!.call("/api/v1/products", { key: k.key })).status).toBe(200);
    const first = await sql<{ t: Date }>`select last_used_at as t from api_keys where id = ${k.id}`.execute(
      replicas[0]!.db,
    );
    expect(first.rows[0]?.t.getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Pretend the last write was two minutes ago: later uses are written by the periodic flush
    // (here: the one at shutdown), not by the requests themselves.
    await sql`update api_keys set last_used_at = now() - interval '2 minutes' where id = ${k.id}`.execute(
      replicas[0]!.db,
    );
    expect((await replicas[2]!.call("/api/v1/products", { key: k.key })).status).toBe(200);
    const stale = await sql<{ t: Date }>`select last_used_at as t from api_keys where id = ${k.id}`.execute(
      replicas[0]!.db,
    );
    expect(stale.rows[0]?.t.getTime()).toBeLessThan(Date.now() - 100_000);
    await replicas[2]!.app.app.close();
    const flushed = await sql<{ t: Date }>`select last_used_at as t from api_keys where id = ${k.id}`.execute(
      replicas[0]!.db,
    );
    expect(flushed.rows[0]?.t.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});
