import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, freshDatabase, productBody, type Service, startService } from "./support/harness.ts";

describe("product-read cache", () => {
  let a: Service;
  let b: Service;
  beforeAll(async () => {
    const url = await freshDatabase();
    a = await startService({}, url);
    b = await startService({}, url);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  const counts = async (svc: Service) => {
    const text = await (await svc.call("/metrics", { key: null })).text();
    const n = (r: string) =>
      Number(
        new RegExp(`commerce_product_cache_requests_total\\{result="${r}"\\} (\\d+)`).exec(text)?.[1] ?? 0,
      );
    return { hit: n("hit"), miss: n("miss") };
  };

  it("serves repeated reads from the cache and drops a product on every replica when it changes", async () => {
    const p = await body(
      await b.call("/api/v1/products", { method: "POST", json: productBody("Bowl", ["BOWL"]) }),
    );
    await a.call(`/api/v1/products/${p.id}`);
    const first = await counts(a);
    const again = await body(await a.call(`/api/v1/products/${p.id}`));
    expect(again.title).toBe("Bowl");
    const second = await counts(a);
    expect(second.hit).toBe(first.hit + 1);
    expect(second.miss).toBe(first.miss);

    // Changed through the other replica: the first one drops its copy at commit.
    await b.call(`/api/v1/products/${p.id}`, { method: "PATCH", json: { title: "Big bowl" } });
    let title = "";
    for (let i = 0; i < 50 && title !== "Big bowl"; i++) {
      title = (await body(await a.call(`/api/v1/products/${p.id}`))).title;
      if (title !== "Big bowl") await new Promise((r) => setTimeout(r, 20));
    }
    expect(title).toBe("Big bowl");
    const r = await a.call(`/api/v1/products/${p.id}`);
    expect(r.headers.get("etag")).toBe('"v2"');

    await b.call(`/api/v1/products/${p.id}`, { method: "DELETE" });
    let status = 200;
    for (let i = 0; i < 50 && status !== 404; i++) {
      status = (await a.call(`/api/v1/products/${p.id}`)).status;
      if (status !== 404) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(404);
  });
});
