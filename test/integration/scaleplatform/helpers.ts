import type { ScalePlatform } from "../../../src/api/v1alpha1/scaleplatform.ts";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, waitFor } from "../../support/cluster.ts";
import { addonEnv } from "../addons/support.ts";

// Small readers over kubectl for the platform tests.

/** Reads an object as JSON, or undefined when it does not exist. */
export async function getObj<T = KubeObject>(ns: string, kind: string, name: string): Promise<T | undefined> {
  const r = await kubectl(["get", kind, name, "-o", "json"], { namespace: ns, allowFailure: true });
  return r.code === 0 ? (JSON.parse(r.stdout) as T) : undefined;
}

/** The platform. */
export async function getPlatform(ns: string, name: string): Promise<ScalePlatform> {
  const p = await getObj<ScalePlatform>(ns, "scaleplatform", name);
  if (!p) throw new Error(`ScalePlatform ${name} not found`);
  return p;
}

/** Applies a ScalePlatform manifest; resolves with kubectl's result (does not throw on refusal). */
export function applyPlatform(ns: string, name: string, spec: Record<string, unknown>) {
  const obj = { apiVersion: "cronscale.io/v1alpha1", kind: "ScalePlatform", metadata: { name }, spec };
  return kubectl(["apply", "--server-side", "--field-manager=test", "-f", "-"], {
    namespace: ns,
    input: JSON.stringify(obj),
    allowFailure: true,
  });
}

/** Applies a manual ScalePlatformBackup `name` of platform `platform` (kubectl throws on refusal). */
export function applyBackupRequest(
  ns: string,
  name: string,
  platform: string,
  type: "full" | "incr" = "full",
) {
  const obj = {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatformBackup",
    metadata: { name },
    spec: { platformName: platform, type },
  };
  return kubectl(["apply", "--server-side", "--field-manager=test", "-f", "-"], {
    namespace: ns,
    input: JSON.stringify(obj),
  });
}

/** Waits for a phase; returns the platform. */
export function waitPhase(
  ns: string,
  name: string,
  phase: string,
  timeoutMs = 300_000,
): Promise<ScalePlatform> {
  return waitFor(
    async () => {
      const p = await getPlatform(ns, name);
      return p.status?.phase === phase ? p : undefined;
    },
    { timeoutMs, intervalMs: 1000, what: `ScalePlatform ${name} phase ${phase}` },
  );
}

/** Runs SQL in the database pod as the generated user (the password comes from the pod's env). */
export async function psql(ns: string, pod: string, sql: string): Promise<string> {
  const script = `PGPASSWORD="$POSTGRES_PASSWORD" psql -h 127.0.0.1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc "$1"`;
  const r = await kubectl(["exec", pod, "-c", "postgres", "--", "bash", "-c", script, "psql", sql], {
    namespace: ns,
  });
  return r.stdout.trim();
}

/** Which field managers own spec.replicas of a Deployment (from managedFields). */
export function replicasOwners(dep: KubeObject): string[] {
  const mf = (dep.metadata.managedFields ?? []) as {
    manager?: string;
    fieldsV1?: { "f:spec"?: Record<string, unknown> };
  }[];
  return mf.filter((m) => m.fieldsV1?.["f:spec"]?.["f:replicas"] !== undefined).map((m) => m.manager ?? "");
}

/** One field of every app pod of a platform, by a jsonpath expression on the pod (e.g. `{.spec.nodeName}`). */
export async function appPodsField(ns: string, platform: string, field: string): Promise<string[]> {
  const r = await kubectl(
    [
      "get",
      "pods",
      "-l",
      `cronscale.io/platform=${platform},app.kubernetes.io/component=app`,
      "-o",
      `jsonpath={range .items[*]}${field}{"\\n"}{end}`,
    ],
    { namespace: ns },
  );
  return r.stdout.split("\n").filter(Boolean);
}

/** The platform's API key (its credentials Secret, key `api-key`). */
export async function apiKey(ns: string, platform: string): Promise<string> {
  const r = await kubectl(["get", "secret", `${platform}-credentials`, "-o", "jsonpath={.data.api-key}"], {
    namespace: ns,
  });
  return Buffer.from(r.stdout, "base64").toString("utf8");
}

/** `spec.backup.repository` for the s3 add-on (versitygw over TLS, the cluster CA), credentials from `secret`. */
export function s3Repository(secret = "s3") {
  const s3 = addonEnv("s3.env") ?? {};
  return {
    s3: {
      endpoint: `${s3.S3_SERVICE_HOST}:443`,
      bucket: s3.S3_BUCKET,
      region: s3.S3_REGION,
      credentialsSecretRef: { name: secret },
      caRef: { configMapName: "kube-root-ca.crt" },
    },
  };
}

/** The credentials Secret `s3Repository` names: the add-on's keys, or another secret key (to make it fail). */
export function createS3Secret(ns: string, name = "s3", secretKey?: string) {
  const s3 = addonEnv("s3.env") ?? {};
  return kubectl(
    [
      "create",
      "secret",
      "generic",
      name,
      `--from-literal=accessKeyId=${s3.S3_ACCESS_KEY}`,
      `--from-literal=secretAccessKey=${secretKey ?? s3.S3_SECRET_KEY}`,
    ],
    { namespace: ns },
  );
}

/** Waits for the platform's BackupHealthy condition (and reason, when given); returns the platform. */
export function waitBackupHealthy(
  ns: string,
  name: string,
  opts: { status?: "True" | "False"; reason?: string; timeoutMs: number; intervalMs?: number },
): Promise<ScalePlatform> {
  const status = opts.status ?? "True";
  return waitFor(
    async () => {
      const p = await getPlatform(ns, name);
      const c = p.status?.conditions?.find((x) => x.type === "BackupHealthy");
      return c?.status === status && (!opts.reason || c.reason === opts.reason) ? p : undefined;
    },
    {
      timeoutMs: opts.timeoutMs,
      intervalMs: opts.intervalMs ?? 1000,
      what: `BackupHealthy=${status} ${opts.reason ?? ""}`,
    },
  );
}
