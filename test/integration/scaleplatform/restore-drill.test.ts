// RPO drill on the local cluster, a benchmark rather than a test: it runs only from
// `npm run bench:restore-drill` (CRONSCALE_DRILL=1; KUBECONFIG of a cluster started with
// ADDONS=platform). A platform with backups to the s3 add-on, a probe table written every second;
// at time T the database pod and its volume are deleted; a ScalePlatformRestore to the latest
// state brings the data back; the RPO is T minus the newest probe row restored. Prints the
// figures as JSON.
import { describe, expect, it } from "vitest";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { skipReason } from "../addons/support.ts";
import { applyPlatform, createS3Secret, getObj, psql, s3Repository, waitBackupHealthy } from "./helpers.ts";
import { usePlatformOperator } from "./operator.ts";

const reason = process.env.CRONSCALE_DRILL === "1" ? await skipReason("dns", "storage", "s3") : "a benchmark";
const WRITE_SECONDS = Number(process.env.DRILL_WRITE_SECONDS ?? 90);
const NAME = "drill";
const DB = `${NAME}-db-0`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(reason)("restore drill: RPO with the database pod and volume deleted", () => {
  const nsRef = useNamespace("rpo", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(nsRef);
  it("restores to latest and measures the RPO", async () => {
    const ns = nsRef.name;
    await createS3Secret(ns);
    const r = await applyPlatform(ns, NAME, {
      plan: "Standard",
      domains: { platform: "drill.platform.test" },
      backup: {
        repository: s3Repository(),
      },
    });
    if (r.code !== 0) throw new Error(r.stderr);
    await waitBackupHealthy(ns, NAME, { timeoutMs: 300_000, intervalMs: 1000 });
    await psql(ns, DB, "create table probe(at timestamptz not null)");
    // The writer runs in the database pod and dies with it.
    const loop = `while :; do PGPASSWORD="$POSTGRES_PASSWORD" psql -h 127.0.0.1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -qAtc "insert into probe values (clock_timestamp())"; sleep 1; done`;
    const writer = kubectl(["exec", DB, "-c", "postgres", "--", "bash", "-c", loop], {
      namespace: ns,
      allowFailure: true,
    });
    await sleep(WRITE_SECONDS * 1000);
    const before = Number(await psql(ns, DB, "select count(*) from probe"));
    const t = Date.now();
    await kubectl(["delete", "pvc", `data-${DB}`, "--wait=false"], { namespace: ns });
    await kubectl(["delete", "pod", DB, "--grace-period=0", "--force"], {
      namespace: ns,
      allowFailure: true,
    });
    await writer;
    process.stderr.write(`drill: database pod and volume deleted after ${before} probe rows\n`);
    await kubectl(["apply", "--server-side", "--field-manager=drill", "-f", "-"], {
      namespace: ns,
      input: JSON.stringify({
        apiVersion: "cronscale.io/v1alpha1",
        kind: "ScalePlatformRestore",
        metadata: { name: "latest" },
        spec: { platformName: NAME },
      }),
    });
    const done = await waitFor(
      async () => {
        const cur = await getObj<{ status?: Record<string, string | number> }>(
          ns,
          "scaleplatformrestore",
          "latest",
        );
        const phase = cur?.status?.phase;
        return phase === "Succeeded" || phase === "Failed" ? cur : undefined;
      },
      { timeoutMs: 600_000, intervalMs: 1000, what: "the restore" },
    );
    if (done.status?.phase !== "Succeeded") throw new Error(`restore failed: ${done.status?.message}`);
    const [rows, newest] = (
      await psql(ns, DB, "select count(*), extract(epoch from max(at)) from probe")
    ).split("|");
    const s = done.status ?? {};
    const figures = {
      probeRowsWritten: before,
      probeRowsRestored: Number(rows),
      rpoSeconds: Math.round((t / 1000 - Number(newest)) * 10) / 10,
      restoreSeconds: (Date.parse(String(s.completionTime)) - Date.parse(String(s.startTime))) / 1000,
      cutoverDowntimeSeconds: s.downtimeSeconds,
      archiveTimeoutSeconds: 60,
    };
    console.log(JSON.stringify(figures, null, 2));
    expect(figures.probeRowsRestored).toBeGreaterThan(0);
  }, 900_000);
});
