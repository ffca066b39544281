import { buildApp } from "./app.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { createDb, migrate } from "./db/database.ts";
import { ensureDefaultStore } from "./db/seed.ts";
import { purgeIdempotencyKeys } from "./http/idempotency.ts";

// The commerce service process: configuration, migrations, HTTP server, background upkeep, and a
// graceful stop on SIGTERM (in-flight requests finish; the pod's preStop sleep drained it first).

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(
        `${JSON.stringify({ level: "fatal", msg: "refusing to start", error: err.message })}\n`,
      );
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
  const { db } = createDb(config.databaseUrl, config.COMMERCE_DB_POOL_SIZE);
  const applied = await untilDatabaseAnswers(() => migrate(db));
  await ensureDefaultStore(db, config);
  const { app, limiter, outbox, webhooks } = await buildApp({ config, db });
  await webhooks.start(outbox);
  app.log.info({ applied }, "migrations applied");
  const upkeep = setInterval(() => {
    Promise.all([purgeIdempotencyKeys(db), limiter.purge()]).catch((err) =>
      app.log.warn({ err }, "upkeep failed"),
    );
  }, 60_000);
  upkeep.unref();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "stopping");
    clearInterval(upkeep);
    await app.close();
    await webhooks.stop();
    await db.destroy();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  await app.listen({ port: config.PORT, host: config.COMMERCE_LISTEN_HOST });
}

/**
 * Runs `first` (the migrations, the first use of the database) until the database answers. A
 * pod often starts before its database does (the database's DNS name exists only once its pod is
 * ready): waiting here keeps the pod running and unready instead of crash-looping into ever longer
 * restart back-offs. Other errors (a failed migration) still stop the process.
 */
async function untilDatabaseAnswers<T>(first: () => Promise<T>): Promise<T> {
  const transient = new Set(["EAI_AGAIN", "ENOTFOUND", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "57P03"]);
  for (let delay = 500; ; delay = Math.min(delay * 2, 5000)) {
    try {
      return await first();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (!code || !transient.has(code)) throw err;
      process.stderr.write(
        `${JSON.stringify({ level: "warn", msg: "database not reachable yet, retrying", code, retryInMs: delay })}\n`,
      );
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

main().catch((err) => {
  process.stderr.write(
    `${JSON.stringify({ level: "fatal", msg: "start failed", error: String(err?.stack ?? err) })}\n`,
  );
  process.exit(1);
});
