import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A throwaway PostgreSQL server for tests: Debian's postgresql-15 binaries (installed by
// hack/cluster/host-deps.sh), a fresh data directory in /tmp, listening on a random loopback
// port only, trust authentication (nothing else can reach it). PostgreSQL refuses to run as
// root, so under root it runs as `nobody`.

/** Where Debian puts the server binaries. */
export const PG_BIN = process.env.CRONSCALE_PG_BIN ?? "/usr/lib/postgresql/15/bin";

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  return existsSync(join(PG_BIN, "postgres"))
    ? undefined
    : `no PostgreSQL server at ${PG_BIN} (make host-deps installs postgresql-15)`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

/** A running server; `stop()` kills it and removes its data. */
export interface TestPostgres {
  /** DSN of the database `cronscale` as user `cronscale`. */
  dsn: string;
  port: number;
  /** Stops the server (fast shutdown); `start()` brings it back on the same port and data. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops and deletes everything. */
  destroy(): Promise<void>;
}

/**
 * Starts a PostgreSQL server with an empty database `cronscale`; fsync off unless `fsync` (tests
 * need no durability, benchmarks measure with production's).
 */
export async function startPostgres(o: { fsync?: boolean } = {}): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), "cronscale-pg-"));
  const data = join(dir, "data");
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? { uid: 65534, gid: 65534 } : {};
  if (asRoot) chownSync(dir, 65534, 65534);
  const run = (bin: string, args: string[]) =>
    execFileSync(join(PG_BIN, bin), args, { ...ids, cwd: dir, stdio: "pipe" });
  run("initdb", ["-D", data, "-U", "cronscale", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const port = await freePort();
  let proc: ChildProcess | undefined;
  const start = async () => {
    const p = spawn(
      join(PG_BIN, "postgres"),
      [
        "-D",
        data,
        "-p",
        String(port),
        "-c",
        "listen_addresses=127.0.0.1",
        "-k",
        dir,
        "-c",
        `fsync=${o.fsync ? "on" : "off"}`,
      ],
      { ...ids, cwd: dir, stdio: "ignore" },
    );
    proc = p;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        run("pg_isready", ["-h", "127.0.0.1", "-p", String(port), "-q"]);
        break;
      } catch {
        if (p.exitCode !== null || Date.now() > deadline) throw new Error("PostgreSQL did not start");
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const stop = async () => {
    const p = proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once("exit", r));
    p.kill("SIGINT"); // fast shutdown
    await exited;
  };
  await start();
  run("createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "cronscale", "cronscale"]);
  return {
    dsn: `postgres://cronscale@127.0.0.1:${port}/cronscale`,
    port,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
