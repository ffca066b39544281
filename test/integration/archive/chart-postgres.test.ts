import { execFileSync } from "node:child_process";
import { join } from "node:path";
import pg from "pg";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { findHelm } from "../../../hack/gen/crds.ts";
import { ensureArchiveSecret } from "../../../src/archive/secrets.ts";
import { RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import {
  clusterEnv,
  hasClusterEnv,
  kubeConfig,
  kubectl,
  useNamespace,
  waitFor,
} from "../../support/cluster.ts";
import { loadImages } from "../../support/images.ts";
import { repoRoot } from "../packaging/support.ts";

// The chart's archive PostgreSQL on a kept volume, with its password in a Secret the operator
// makes (the code the operator runs at start, against the real API server): the database takes
// the Secret's password, keeps it across restarts, and when the Secret is made anew (deleted by
// hand, or left behind by an upgrade from a chart that rendered it), the kept volume follows the
// new Secret at the next start instead of locking the operator out.

const helm = hasClusterEnv() ? join(clusterEnv().BIN_DIR, "helm") : findHelm();
const skip = !hasClusterEnv()
  ? "needs the local cluster (the project's postgres image is imported into its node)"
  : !helm
    ? "no helm binary"
    : undefined;
if (skip) console.warn(`chart archive PostgreSQL test skipped: ${skip}`);

const ns = useNamespace("archive-pg", {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
});
const NAME = "cs-cronscale-archive";
const log = pino({ level: "silent" });

async function defaultStorageClass(): Promise<string | undefined> {
  const r = await kubectl(["get", "storageclass", "-o", "json"], { allowFailure: true });
  if (r.code !== 0) return undefined;
  const items = JSON.parse(r.stdout).items as {
    metadata: { name: string; annotations?: Record<string, string> };
  }[];
  return items.find((s) => s.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true")
    ?.metadata.name;
}

async function podIP(): Promise<string> {
  return waitFor(
    async () => {
      const r = await kubectl(["get", "pod", `${NAME}-0`, "-o", "json"], {
        namespace: ns.name,
        allowFailure: true,
      });
      if (r.code !== 0) return undefined;
      const pod = JSON.parse(r.stdout);
      const ready = pod.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
      );
      return ready && !pod.metadata.deletionTimestamp ? (pod.status.podIP as string) : undefined;
    },
    { what: "the archive pod ready", timeoutMs: 240_000, intervalMs: 1000 },
  );
}

/** Runs `sql` as the DSN's user at the pod's IP (the host routes to pod IPs); throws on refusal. */
async function query(dsn: string, ip: string, sql: string): Promise<unknown[]> {
  const u = new URL(dsn);
  u.hostname = ip;
  const c = new pg.Client({ connectionString: u.toString(), connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return (await c.query(sql)).rows;
  } finally {
    await c.end();
  }
}

describe.skipIf(skip !== undefined)(
  "the chart's archive PostgreSQL and the Secret the operator makes",
  () => {
    it("serves the Secret's password, keeps data and password across restarts, follows a Secret made anew", async (ctx) => {
      const sc = await defaultStorageClass();
      if (!sc) {
        console.warn("skipped: no default StorageClass (the storage add-on) for the kept volume");
        ctx.skip();
        return;
      }
      const [postgresRef] = loadImages(["postgres"], clusterEnv().CONTAINERD_ADDRESS);
      const manifest = execFileSync(
        helm!,
        [
          "template",
          "cs",
          join(repoRoot, "charts/cronscale"),
          "--namespace",
          ns.name,
          "--show-only",
          "templates/archive-postgres.yaml",
          "--set",
          `archive.postgres.image=${postgresRef}`,
          "--set",
          "archive.postgres.imagePullPolicy=Never",
          "--set",
          `archive.postgres.persistence.storageClassName=${sc}`,
        ],
        { encoding: "utf8" },
      );
      await kubectl(["apply", "-n", ns.name, "-f", "-"], { input: manifest });

      const client = new RealKubeClient(KubeTransport.create(kubeConfig()));
      const o = { namespace: ns.name, name: NAME, host: `${NAME}.${ns.name}.svc`, log };
      const dsn1 = await ensureArchiveSecret(client, o);
      let ip = await podIP();
      expect(await query(dsn1, ip, "select 1 as one")).toEqual([{ one: 1 }]);
      await query(dsn1, ip, "create table kept (v text); insert into kept values ('before')");

      // A restart: same Secret, same password, same data.
      await kubectl(["delete", "pod", `${NAME}-0`, "--wait"], { namespace: ns.name, timeoutMs: 120_000 });
      ip = await podIP();
      expect(await ensureArchiveSecret(client, o)).toBe(dsn1);
      expect(await query(dsn1, ip, "select v from kept")).toEqual([{ v: "before" }]);

      // The Secret is lost and made anew: a new password, which the kept volume takes at the next start.
      await kubectl(["delete", "secret", NAME], { namespace: ns.name });
      const dsn2 = await ensureArchiveSecret(client, o);
      expect(dsn2).not.toBe(dsn1);
      await kubectl(["delete", "pod", `${NAME}-0`, "--wait"], { namespace: ns.name, timeoutMs: 120_000 });
      ip = await podIP();
      expect(await query(dsn2, ip, "select v from kept")).toEqual([{ v: "before" }]);
      await expect(query(dsn1, ip, "select 1")).rejects.toThrow(/password authentication failed/);
      const logs = await kubectl(["logs", `${NAME}-0`, "-c", "sync-password"], { namespace: ns.name });
      expect(logs.stdout).toContain("password of cronscale set from the Secret");
      expect(await ensureArchiveSecret(client, o)).toBe(dsn2);
    });
  },
);
