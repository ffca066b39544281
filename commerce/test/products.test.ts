import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, productBody, type Service, startService } from "./support/harness.ts";

describe("products", () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService({ CONFIG_LOCALIZATION: '{"currency":"EUR"}' });
  });
  afterAll(() => svc.close());

  it("creates, reads, updates with If-Match and deletes a product", async () => {
    const created = await svc.call("/api/v1/products", {
      method: "POST",
      json: productBody("Mug", ["MUG-1", "MUG-2"], 1299),
    });
    expect(created.status).toBe(201);
    const p = await body(created);
    expect(p.variants.map((v: { sku: string }) => v.sku)).toEqual(["MUG-1", "MUG-2"]);
    expect(p.variants[0]).toMatchObject({ priceMinor: 1299, currency: "EUR" });
    expect(created.headers.get("etag")).toBe('"v1"');
    expect(created.headers.get("location")).toBe(`/api/v1/products/${p.id}`);

    const got = await svc.call(`/api/v1/products/${p.id}`);
    expect(got.headers.get("etag")).toBe('"v1"');

    const patch = { title: "Big mug", variants: [{ id: p.variants[0].id, priceMinor: 1499 }] };
    const ok = await svc.call(`/api/v1/products/${p.id}`, {
      method: "PATCH",
      json: patch,
      headers: { "if-match": '"v1"' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("etag")).toBe('"v2"');
    const updated = await body(ok);
    expect(updated.title).toBe("Big mug");
    expect(updated.variants[0].priceMinor).toBe(1499);

    const stale = await svc.call(`/api/v1/products/${p.id}`, {
      method: "PATCH",
      json: { title: "x" },
      headers: { "if-match": '"v1"' },
    });
    expect(stale.status).toBe(412);
    expect(stale.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(stale.headers.get("etag")).toBe('"v2"');

    expect(
      (await svc.call(`/api/v1/products/${p.id}`, { method: "DELETE", headers: { "if-match": '"v2"' } }))
        .status,
    ).toBe(204);
    const gone = await svc.call(`/api/v1/products/${p.id}`);
    expect(gone.status).toBe(404);
    expect((await body(gone)).type).toMatch(/not-found/);
  });

  it("names the bad field in RFC 9457 problems", async () => {
    const r = await svc.call("/api/v1/products", {
      method: "POST",
      json: {
        title: "T",
        variants: [
          { sku: "ok", title: "a", priceMinor: 1 },
          { sku: "bad sku!", title: "b", priceMinor: -1 },
        ],
      },
    });
    expect(r.status).toBe(422);
    expect(r.headers.get("content-type")).toMatch(/application\/problem\+json/);
    const p = await body(r);
    expect(p).toMatchObject({ status: 422, title: "Invalid request" });
    const pointers = p.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(["#/variants/1/priceMinor", "#/variants/1/sku"]);
    expect(p.detail).toMatch(/variants\/1\/sku/);

    await svc.call("/api/v1/products", { method: "POST", json: productBody("A", ["DUP-1"]) });
    const dup = await svc.call("/api/v1/products", {
      method: "POST",
      json: productBody("B", ["NEW-1", "DUP-1"]),
    });
    expect(dup.status).toBe(409);
    expect((await body(dup)).errors[0].pointer).toBe("#/variants/1/sku");

    const q = await svc.call("/api/v1/products?limit=1000");
    expect(q.status).toBe(422);
    expect((await body(q)).errors[0]).toMatchObject({ pointer: "#/limit", in: "query" });
  });

  it("pages with a cursor that stays stable while rows are inserted", async () => {
    for (let i = 0; i < 7; i++) {
      await svc.call("/api/v1/products", { method: "POST", json: productBody(`Page ${i}`, [`PG-${i}`]) });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    do {
      const qs: string = `/api/v1/products?q=Page&sort=createdAt&limit=3${cursor ? `&cursor=${cursor}` : ""}`;
      const r = await body(await svc.call(qs));
      seen.push(...r.data.map((p: { title: string }) => p.title));
      cursor = r.nextCursor;
      // New rows arrive between pages: they sort after the cursor and are met once, at the end.
      if (inserted < 2) {
        await svc.call("/api/v1/products", {
          method: "POST",
          json: productBody(`Page new ${inserted}`, [`PGN-${inserted}`]),
        });
        inserted++;
      }
    } while (cursor);
    expect(seen).toEqual([...Array.from({ length: 7 }, (_, i) => `Page ${i}`), "Page new 0", "Page new 1"]);

    // Descending by title, filtered by status.
    const desc = await body(await svc.call("/api/v1/products?q=Page&sort=-title&limit=50&status=active"));
    const titles = desc.data.map((p: { title: string }) => p.title);
    expect(titles).toEqual([...titles].sort().reverse());
    const bySku = await body(await svc.call("/api/v1/products?sku=PG-3"));
    expect(bySku.data.map((p: { title: string }) => p.title)).toEqual(["Page 3"]);

    const wrong = await svc.call(
      `/api/v1/products?sort=title&cursor=${Buffer.from('{"s":"-createdAt","v":null,"id":"x"}').toString("base64url")}`,
    );
    expect(wrong.status).toBe(422);
  });

  it("replays an idempotent POST, and refuses the same key with another body", async () => {
    const key = { "idempotency-key": "create-hat-1" };
    const first = await svc.call("/api/v1/products", {
      method: "POST",
      json: productBody("Hat", ["HAT-1"]),
      headers: key,
    });
    const again = await svc.call("/api/v1/products", {
      method: "POST",
      json: productBody("Hat", ["HAT-1"]),
      headers: key,
    });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
    expect(await body(again)).toEqual(await body(first));
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from products where title = 'Hat'`.execute(svc.db);
    expect(rows[0]?.n).toBe(1);

    const other = await svc.call("/api/v1/products", {
      method: "POST",
      json: productBody("Cap", ["CAP-1"]),
      headers: key,
    });
    expect(other.status).toBe(422);
    expect((await body(other)).detail).toMatch(/Idempotency-Key/);

    // After 24 hours the key may be used again.
    await sql`update idempotency_keys set created_at = now() - interval '25 hours'`.execute(svc.db);
    const later = await svc.call("/api/v1/products", {
      method: "POST",
      json: productBody("Cap", ["CAP-1"]),
      headers: key,
    });
    expect(later.status).toBe(201);
  });
});

describe("plan product limit", () => {
  it("refuses the 10,001st product on Standard with a clear problem", async () => {
    const svc = await startService({ PLATFORM_PLAN: "Standard" });
    try {
      await sql`insert into products (id, title, status) select 'seed-' || g, 'seed', 'active' from generate_series(1, 9999) g`.execute(
        svc.db,
      );
      expect(
        (await svc.call("/api/v1/products", { method: "POST", json: productBody("Last", ["LAST"]) })).status,
      ).toBe(201);
      const r = await svc.call("/api/v1/products", { method: "POST", json: productBody("Over", ["OVER"]) });
      expect(r.status).toBe(403);
      const p = await body(r);
      expect(p.detail).toMatch(/Standard plan allows 10,000 products/);
      expect(p.limit).toBe(10000);
    } finally {
      await svc.close();
    }
  });

  it("does not limit Enterprise", async () => {
    const svc = await startService({ PLATFORM_PLAN: "Enterprise" });
    try {
      await sql`insert into products (id, title, status) select 'seed-' || g, 'seed', 'active' from generate_series(1, 50000) g`.execute(
        svc.db,
      );
      expect(
        (await svc.call("/api/v1/products", { method: "POST", json: productBody("More", ["MORE"]) })).status,
      ).toBe(201);
    } finally {
      await svc.close();
    }
  });
});
