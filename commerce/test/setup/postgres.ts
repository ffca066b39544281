import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";

// One real PostgreSQL server per test run, as a host process: Debian's postgresql-15 binaries
// (commerce/hack/postgres-deps.sh installs them), data in a temp dir, listening on a random port
// of 127.0.0.1 only. PostgreSQL refuses to run as root, so as root it runs as the `postgres` user
// the Debian package creates. Each test file makes its own database (test/support/db.ts).

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
  }
}

const BIN = process.env.COMMERCE_PG_BIN ?? "/usr/lib/postgresql/15/bin";

/** A free TCP port on 127.0.0.1 (the other test servers take theirs here too). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

export interface Postgres {
  /** Superuser URL of the `postgres` database. */
  url: string;
  stop: () => Promise<void>;
}

/**
 * Starts a throwaway PostgreSQL server (used by the tests and the benchmarks). `durable` keeps
 * production's settings (fsync, synchronous_commit, full_page_writes on) for benchmarks.
 */
export async function startPostgres(opts: { durable?: boolean } = {}): Promise<Postgres> {
  if (!existsSync(join(BIN, "postgres"))) {
    throw new Error(`${BIN}/postgres not found: run commerce/hack/postgres-deps.sh (or set COMMERCE_PG_BIN)`);
  }
  const dir = await mkdtemp(join(tmpdir(), "commerce-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  let uid: number | undefined;
  let gid: number | undefined;
  if (asRoot) {
    uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    await chown(dir, uid, gid);
    await chmod(dir, 0o700);
  }
  const run = (cmd: string, args: string[]) =>
    execFileSync(join(BIN, cmd), args, { uid, gid, cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  run("initdb", ["-D", data, "-U", "commerce", "--auth=trust", "-E", "UTF8", "--no-sync"]);

  const port = await freePort();
  const server = spawn(
    join(BIN, "postgres"),
    [
      ...["-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1"],
      // Throwaway data: durability off, so the tests spend their time on queries.
      ...(opts.durable
        ? []
        : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
      ...["-c", "max_connections=200"],
    ],
    { uid, gid, cwd: dir, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  server.stderr?.on("data", (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  const url = `postgres://commerce@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => {});
      if (server.exitCode !== null || Date.now() > deadline) {
        server.kill("SIGKILL");
        throw new Error(`postgres did not start: ${String(err)}\n${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = async () => {
    // SIGINT is PostgreSQL's fast shutdown: open sessions are ended, no checkpoint wait.
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGINT");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (server.exitCode === null) server.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  };
  return { url, stop };
}

export default async function setup(project: TestProject) {
  const pg = await startPostgres();
  project.provide("pgAdminUrl", pg.url);
  return pg.stop;
}
