import { randomUUID } from "node:crypto";
import { generateKeyPair, importJWK, type JWK, SignJWT } from "jose";
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { skipReason } from "../addons/support.ts";
import { psql } from "../scaleplatform/helpers.ts";
import { conventionTests } from "./api-conventions.ts";
import { operationTests } from "./api-operations.ts";
import { resourceTests } from "./api-resources.ts";
import { webhookTests } from "./api-webhooks.ts";
import { API, HOST, NAME, useCommercePlatform } from "./platform.ts";
import { api, apiJson, ingressFetch } from "./support.ts";

// The commerce service as a ScalePlatform runs it, used the way its users do: HTTPS through the
// Ingress controller with the cluster CA's certificate, the API key from the platform's
// credentials Secret, an OAuth client library, webhooks to a receiver on the host verified with
// the Standard Webhooks library — and what must hold while the cluster moves pods around. One
// platform serves every group below, in order (the operations group disturbs it last).

const reason = await skipReason("dns", "storage", "ingress", "cert-manager", "custom-metrics");
const productBody = (sku: string) => ({
  title: sku,
  variants: [{ sku, title: sku, priceMinor: 1999, inventory: { available: 100, lowStockThreshold: 1 } }],
});

describe.skipIf(reason)("the commerce service of a ScalePlatform, through Traefik over TLS", () => {
  const p = useCommercePlatform();

  describe("credentials", () => {
    it("the operator's API key works after deployment; no credential is 401 with WWW-Authenticate", async () => {
      const ok = await api(API, "/api/v1/products", p.key);
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ data: [], nextCursor: null });
      expect(ok.headers.get("ratelimit-policy")).toBe('"per-credential";q=600;w=60');
      const none = await ingressFetch(`https://${API}/api/v1/products`);
      expect(none.status).toBe(401);
      expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
      // The API belongs to the API host only.
      expect((await api(HOST, "/api/v1/products", p.key)).status).toBe(404);
    });

    it("a scoped key is refused outside its scopes, naming the missing scope", async () => {
      const { key: scoped } = await apiJson<{ key: string }>(API, "/api/v1/api-keys", p.key, 201, {
        json: { name: "catalog", scopes: ["products:read"] },
      });
      expect((await api(API, "/api/v1/products", scoped)).status).toBe(200);
      const write = await api(API, "/api/v1/products", scoped, { json: productBody("NOPE") });
      expect(write.status).toBe(403);
      expect(write.headers.get("www-authenticate")).toMatch(/insufficient_scope.*products:write/);
      expect(await write.json()).toMatchObject({ requiredScope: "products:write" });
      expect((await api(API, "/api/v1/orders", scoped)).status).toBe(403);
    });

    it("client credentials through oauth4webapi yield a JWT the API accepts; expired, foreign-signed, other-issuer and tampered tokens are 401", async () => {
      const c = await apiJson<{ id: string; clientSecret: string }>(
        API,
        "/api/v1/oauth-clients",
        p.key,
        201,
        {
          json: { name: "erp", scopes: ["products:read"] },
        },
      );
      const as: oauth.AuthorizationServer = {
        issuer: `https://${API}`,
        token_endpoint: `https://${API}/oauth/token`,
      };
      const client: oauth.Client = { client_id: c.id };
      const res = await oauth.clientCredentialsGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(c.clientSecret),
        { scope: "products:read" },
        { [oauth.customFetch]: ingressFetch },
      );
      const token = await oauth.processClientCredentialsResponse(as, client, res);
      expect(token.token_type.toLowerCase()).toBe("bearer");
      const [header, payload] = token.access_token
        .split(".")
        .slice(0, 2)
        .map((x) => JSON.parse(Buffer.from(x, "base64url").toString()) as Record<string, unknown>);
      expect(header).toMatchObject({ typ: "at+jwt", alg: "ES256" });
      expect(payload).toMatchObject({ iss: `https://${API}`, client_id: c.id, scope: "products:read" });
      expect((await api(API, "/api/v1/products", token.access_token)).status).toBe(200);
      expect((await api(API, "/api/v1/orders", token.access_token)).status).toBe(403);

      // Tokens made here with jose: the service's own key (read from its database) signing a
      // token that is valid but for one claim, and a key of our own with the service's key id.
      const own = JSON.parse(
        await psql(
          p.ns,
          `${NAME}-db-0`,
          "select private_jwk::text from signing_keys order by created_at desc limit 1",
        ),
      ) as JWK & { kid: string };
      const foreign = (await generateKeyPair("ES256")).privateKey;
      const now = Math.floor(Date.now() / 1000);
      const make = (o: { key: CryptoKey; iss?: string; exp?: number }) =>
        new SignJWT({ client_id: c.id, scope: "products:read" })
          .setProtectedHeader({ alg: "ES256", kid: own.kid, typ: "at+jwt" })
          .setIssuer(o.iss ?? `https://${API}`)
          .setAudience(`https://${API}`)
          .setSubject(c.id)
          .setJti(randomUUID())
          .setIssuedAt(now - 7200)
          .setExpirationTime(o.exp ?? now + 600)
          .sign(o.key);
      const ownKey = (await importJWK(own, "ES256")) as CryptoKey;
      // The control: with the service's key and every claim right, the token is accepted.
      expect((await api(API, "/api/v1/products", await make({ key: ownKey }))).status).toBe(200);
      for (const [what, bad] of [
        ["expired", await make({ key: ownKey, exp: now - 60 })],
        ["foreign-signed", await make({ key: foreign })],
        ["other issuer", await make({ key: ownKey, iss: "https://issuer.example" })],
        ["tampered", `${token.access_token.slice(0, -4)}AAAA`],
      ] as const) {
        const r = await api(API, "/api/v1/products", bad);
        expect(r.status, what).toBe(401);
        expect(r.headers.get("www-authenticate"), what).toMatch(/invalid_token/);
      }
    });
  });

  describe("resources through REST and GraphQL", () => resourceTests(p));
  describe("conventions and analytics", () => conventionTests(p));
  describe("webhooks", () => webhookTests(p));
  describe("operations", () => operationTests(p));
});
