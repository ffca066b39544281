import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../src/auth/secrets.ts";
import { ratePerMinute } from "../src/http/ratelimit.ts";
import { body, freshDatabase, type Service, startService } from "./support/harness.ts";

describe("rate limits", () => {
  it("by plan: Standard < Professional < Enterprise; Custom as configured", () => {
    expect(ratePerMinute("Standard")).toBe(600);
    expect(ratePerMinute("Professional")).toBe(1800);
    expect(ratePerMinute("Enterprise")).toBe(6000);
    expect(ratePerMinute("Custom", 250)).toBe(250);
    expect(ratePerMinute("Standard", "unlimited")).toBe(Number.POSITIVE_INFINITY);
  });

  describe("shared across replicas", () => {
    const QUOTA = 20;
    let replicas: Service[];
    beforeAll(async () => {
      const url = await freshDatabase();
      const env = { COMMERCE_RATE_LIMIT_PER_MINUTE: String(QUOTA) };
      replicas = [await startService(env, url), await startService(env, url), await startService(env, url)];
    });
    afterAll(() => Promise.all(replicas.map((r) => r.close())));

    it("three replicas together allow the stated rate per credential, not three times it", async () => {
      // Stay inside one window: start with at least 10 s of it left.
      const into = Date.now() % 60_000;
      if (into > 50_000) await new Promise((r) => setTimeout(r, 60_000 - into + 100));
      const results: Response[] = [];
      for (let i = 0; i < QUOTA * 2; i++) results.push(await replicas[i % 3]!.call("/api/v1/products"));
      const ok = results.filter((r) => r.status === 200);
      const limited = results.filter((r) => r.status === 429);
      expect(ok.length).toBe(QUOTA);
      expect(limited.length).toBe(QUOTA);

      const first = results[0]!;
      expect(first.headers.get("ratelimit-policy")).toBe(`"per-credential";q=${QUOTA};w=60`);
      expect(first.headers.get("ratelimit")).toMatch(new RegExp(`^"per-credential";r=${QUOTA - 1};t=\\d+$`));
      const last = limited[limited.length - 1]!;
      const retry = Number(last.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      expect(last.headers.get("ratelimit")).toMatch(/r=0;/);
      expect(last.headers.get("content-type")).toMatch(/application\/problem\+json/);
      expect((await body(last)).detail).toMatch(/20 requests per 60 s/);

      // Another credential has its own budget.
      const other = "csk_other0000000000000000000000000000000000";
      await replicas[0]!.db
        .insertInto("apiKeys")
        .values({
          id: "key_other",
          name: "other",
          prefix: other.slice(0, 10),
          hash: sha256(other),
          scopes: ["*"],
        })
        .execute();
      expect((await replicas[1]!.call("/api/v1/products", { key: other })).status).toBe(200);
    });
  });
});
