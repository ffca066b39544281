import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, OPERATOR_KEY, productBody } from "./support/harness.ts";
import { type ServiceProcess, startProcess } from "./support/process.ts";

// An idempotent POST whose process is killed mid-request: its key stays in flight (409) until
// the request time limit, then the first retry runs it once and later retries replay that answer.

const LIMIT_SECONDS = 3;

describe("an Idempotency-Key whose request died", () => {
  let dbUrl: string;
  let replicas: ServiceProcess[];
  beforeAll(async () => {
    dbUrl = await freshDatabase();
    const env = (port: number) => ({
      DATABASE_URL: dbUrl,
      API_KEY: OPERATOR_KEY,
      COMMERCE_LOG_LEVEL: "warn",
      COMMERCE_REQUEST_TIME_LIMIT_SECONDS: String(LIMIT_SECONDS),
      API_URL: `http://127.0.0.1:${port}/`,
    });
    replicas = [await startProcess(env), await startProcess(env)];
  });
  afterAll(() => Promise.all(replicas.map((r) => r.stop())));

  it("is released after the request time limit; the retry then runs once and is replayed", async () => {
    const post = (r: ServiceProcess) =>
      fetch(`http://127.0.0.1:${r.port}/api/v1/products`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${OPERATOR_KEY}`,
          "content-type": "application/json",
          "idempotency-key": "create-boot-1",
        },
        body: JSON.stringify(productBody("Boot", ["BOOT-1"])),
      });
    const sql = new pg.Client({ connectionString: dbUrl });
    await sql.connect();
    try {
      // Hold the products table so the first request stops at its insert, then kill its process.
      await sql.query("begin");
      await sql.query("lock table products in exclusive mode");
      const first = post(replicas[0]!).then(
        (r) => r.status,
        () => "no answer",
      );
      let waiting = 0;
      for (let i = 0; i < 200 && waiting === 0; i++) {
        const { rows } = await sql.query(
          "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
        );
        waiting = rows[0].n;
        if (waiting === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(waiting).toBe(1);
      expect((await sql.query("select count(*)::int as n from idempotency_keys")).rows[0].n).toBe(1);
      await replicas[0]!.kill();
      await sql.query("commit");
      expect(await first).toBe("no answer");
      const { rows: held } = await sql.query(
        "select status_code, extract(epoch from now() - created_at) as age from idempotency_keys where key = 'create-boot-1'",
      );
      expect(held).toHaveLength(1);
      expect(held[0].status_code).toBeNull();

      // Within the limit the key is still in flight on every replica.
      expect(Number(held[0].age)).toBeLessThan(LIMIT_SECONDS);
      expect((await post(replicas[1]!)).status).toBe(409);

      // After it, the first retry runs the request, once; the next ones replay its answer.
      await new Promise((r) => setTimeout(r, (LIMIT_SECONDS - Number(held[0].age)) * 1000 + 200));
      const retries = await Promise.all([post(replicas[1]!), post(replicas[1]!), post(replicas[1]!)]);
      // Concurrent retries: one runs; the others find it running (409) or already answered (replayed).
      const ran = retries.filter((r) => r.status === 201 && !r.headers.get("idempotent-replayed"));
      expect(ran).toHaveLength(1);
      for (const r of retries.filter((r) => !ran.includes(r))) {
        expect(r.status === 409 || r.headers.get("idempotent-replayed") === "true").toBe(true);
      }
      const replayed = await post(replicas[1]!);
      expect(replayed.status).toBe(201);
      expect(replayed.headers.get("idempotent-replayed")).toBe("true");
      expect(replayed.headers.get("location")).toBe(ran[0]!.headers.get("location"));
      expect(await replayed.json()).toEqual(await ran[0]!.json());
      const { rows } = await sql.query("select count(*)::int as n from products where title = 'Boot'");
      expect(rows[0].n).toBe(1);
    } finally {
      await sql.end();
    }
  });
});
