import { sql } from "kysely";
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

    it("three replicas together admit the bucket's burst, then one request per interval, not three times it", async () => {
      const interval = 60_000 / QUOTA;
      const t0 = Date.now();
      const results: Response[] = [];
      for (let i = 0; i < QUOTA * 2; i++) results.push(await replicas[i % 3]!.call("/api/v1/products"));
      const elapsed = Date.now() - t0;
      const ok = results.filter((r) => r.status === 200);
      const limited = results.filter((r) => r.status === 429);
      // GCRA: a burst of QUOTA, then one token per 60/QUOTA s (none yet unless the loop was slow).
      expect(ok.length).toBeGreaterThanOrEqual(QUOTA);
      expect(ok.length).toBeLessThanOrEqual(QUOTA + Math.floor(elapsed / interval));
      expect(limited.length).toBe(QUOTA * 2 - ok.length);

      const first = results[0]!;
      expect(first.headers.get("ratelimit-policy")).toBe(`"per-credential";q=${QUOTA};w=60`);
      expect(first.headers.get("ratelimit")).toMatch(new RegExp(`^"per-credential";r=${QUOTA - 1};t=\\d+$`));
      const last = limited[limited.length - 1]!;
      const retry = Number(last.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(interval / 1000);
      expect(last.headers.get("ratelimit")).toMatch(/r=0;/);
      expect(last.headers.get("content-type")).toMatch(/application\/problem\+json/);
      expect((await body(last)).detail).toMatch(/20 requests per 60 s \(a burst of 20, then one every 3 s\)/);

      // No second burst at a window's edge: after Retry-After exactly one more request is admitted
      // (whichever replica it reaches), and the next one again waits for its interval.
      await new Promise((r) => setTimeout(r, retry * 1000));
      const after: number[] = [];
      for (let i = 0; i < 6; i++) after.push((await replicas[i % 3]!.call("/api/v1/products")).status);
      expect(after.filter((s) => s === 200)).toHaveLength(1);
      expect(after.filter((s) => s === 429)).toHaveLength(5);

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

  describe("under sustained load across replicas", () => {
    const RATE = 3_000; // per minute: one token every 20 ms
    let replicas: Service[];
    beforeAll(async () => {
      const url = await freshDatabase();
      const env = { COMMERCE_RATE_LIMIT_PER_MINUTE: String(RATE) };
      replicas = [await startService(env, url), await startService(env, url), await startService(env, url)];
    });
    afterAll(() => Promise.all(replicas.map((r) => r.close())));

    it("admits the bucket's rate within 2% while three replicas are pressed far beyond it", async () => {
      const db = replicas[0]!.db;
      // Start from an empty bucket (its burst spent), so what follows is the sustained rate alone.
      const start = await sql<{ t0: Date }>`
        insert into rate_limit_buckets (key, tat) values ('key:operator', now() + interval '60 seconds')
        on conflict (key) do update set tat = excluded.tat returning now() as t0`.execute(db);
      const statuses = new Map<number, number>();
      const until = Date.now() + 5_000;
      await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          while (Date.now() < until) {
            const r = await replicas[i % 3]!.call("/api/v1/products?limit=1");
            await r.arrayBuffer();
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          }
        }),
      );
      const end = await sql<{ t1: Date }>`select now() as t1`.execute(db);
      const seconds = (end.rows[0]!.t1.getTime() - start.rows[0]!.t0.getTime()) / 1000;
      const allowed = (seconds * RATE) / 60;
      const admitted = statuses.get(200) ?? 0;
      // Pressed beyond the rate (many requests refused), yet admitted at most 2% over it, and not
      // starved either.
      expect(statuses.get(429) ?? 0).toBeGreaterThan(admitted / 2);
      expect([...statuses.keys()].sort()).toEqual([200, 429]);
      expect(admitted).toBeLessThanOrEqual(allowed * 1.02);
      expect(admitted).toBeGreaterThanOrEqual(allowed * 0.9);
    });
  });
});
