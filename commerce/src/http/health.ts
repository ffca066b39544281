import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import { type DB, pendingMigrations } from "../db/database.ts";
import type { HttpMetrics } from "./metrics.ts";
import { Problem } from "./problem.ts";

// /healthz: the process serves. /readyz: the database answers and this version's migrations are
// applied (a pod that cannot serve the API is taken out of the Service). /metrics: Prometheus, for
// the pod address only (not on the public hosts of the Ingress).

export function installHealth(
  app: FastifyInstance,
  deps: { db: DB; metrics: HttpMetrics; internalOnly: (string | undefined)[] },
): void {
  const publicHosts = new Set(deps.internalOnly.filter(Boolean));
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_req, reply) => {
    try {
      await sql`select 1`.execute(deps.db);
      const pending = await pendingMigrations(deps.db);
      if (pending.length) {
        throw new Problem(503, "not-ready", "Not ready", `migrations not applied: ${pending.join(", ")}`);
      }
    } catch (err) {
      if (err instanceof Problem) throw err;
      throw new Problem(503, "not-ready", "Not ready", `database unreachable: ${(err as Error).message}`);
    }
    return reply.send({ status: "ready" });
  });
  app.get("/metrics", async (req, reply) => {
    if (publicHosts.has(req.hostname.replace(/:\d+$/, "").toLowerCase())) {
      throw new Problem(404, "not-found", "Not found", `no route for GET /metrics`);
    }
    return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });
}
