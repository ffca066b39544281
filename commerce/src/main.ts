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
  const applied = await migrate(db);
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

main().catch((err) => {
  process.stderr.write(
    `${JSON.stringify({ level: "fatal", msg: "start failed", error: String(err?.stack ?? err) })}\n`,
  );
  process.exit(1);
});
