import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { apply, nodeImages, skipReason } from "./support.ts";

// The local PostgreSQL image on the storage add-on: a StatefulSet whose data lives in a PVC of
// the default class, initialised from a Secret's generated password; a client pod connects
// with that password and is refused with a wrong one.

const reason = await skipReason("storage");

describe.skipIf(reason)("PostgreSQL image on local-path storage", () => {
  const ns = useNamespace("pg");
  const password = randomBytes(12).toString("hex");
  let image = "";
  let host = "";

  beforeAll(async () => {
    image = nodeImages("postgres").postgres;
    const labels = { app: "db" };
    await apply(ns.name, [
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "db" },
        stringData: { username: "app", password, database: "appdb" },
      },
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "db" },
        spec: { selector: labels, ports: [{ port: 5432, targetPort: 5432 }] },
      },
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "db" },
        spec: {
          serviceName: "db",
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 999,
                fsGroup: 999,
                seccompProfile: { type: "RuntimeDefault" },
              },
              terminationGracePeriodSeconds: 5,
              containers: [
                {
                  name: "postgres",
                  image,
                  imagePullPolicy: "Never",
                  env: [
                    { name: "POSTGRES_USER", valueFrom: { secretKeyRef: { name: "db", key: "username" } } },
                    {
                      name: "POSTGRES_PASSWORD",
                      valueFrom: { secretKeyRef: { name: "db", key: "password" } },
                    },
                    { name: "POSTGRES_DB", valueFrom: { secretKeyRef: { name: "db", key: "database" } } },
                  ],
                  ports: [{ containerPort: 5432 }],
                  readinessProbe: {
                    exec: { command: ["pg_isready", "-h", "127.0.0.1", "-p", "5432"] },
                    periodSeconds: 2,
                  },
                  volumeMounts: [{ name: "data", mountPath: "/var/lib/postgresql/data" }],
                  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
                },
              ],
            },
          },
          volumeClaimTemplates: [
            {
              metadata: { name: "data" },
              spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "256Mi" } } },
            },
          ],
        },
      },
    ]);
    await kubectl(["rollout", "status", "statefulset/db", "--timeout=180s"], {
      namespace: ns.name,
      timeoutMs: 190_000,
    });
    host = (
      await kubectl(["get", "service", "db", "-o", "jsonpath={.spec.clusterIP}"], { namespace: ns.name })
    ).stdout;
  }, 240_000);

  /** Runs psql in a pod with PGPASSWORD=`pw`; returns its exit code and output. */
  async function psql(name: string, pw: string): Promise<{ phase: string; logs: string }> {
    await apply(ns.name, [
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name },
        spec: {
          restartPolicy: "Never",
          securityContext: { runAsNonRoot: true, runAsUser: 999, seccompProfile: { type: "RuntimeDefault" } },
          containers: [
            {
              name: "psql",
              image,
              imagePullPolicy: "Never",
              command: [
                "psql",
                "-h",
                host,
                "-U",
                "app",
                "-d",
                "appdb",
                "-tAc",
                "select current_user || '@' || current_database()",
              ],
              env: [
                { name: "PGPASSWORD", value: pw },
                { name: "PGCONNECT_TIMEOUT", value: "10" },
              ],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
            },
          ],
        },
      },
    ]);
    const phase = await waitFor(
      async () => {
        const r = await kubectl(["get", "pod", name, "-o", "jsonpath={.status.phase}"], {
          namespace: ns.name,
        });
        return r.stdout === "Succeeded" || r.stdout === "Failed" ? r.stdout : undefined;
      },
      { timeoutMs: 90_000, what: `pod ${name} to finish` },
    );
    return { phase, logs: (await kubectl(["logs", name], { namespace: ns.name })).stdout };
  }

  /**
   * Runs psql until it gets past the network: right after the rollout the Service's rules may
   * not be on the node yet, and a connection error says nothing about the password. Any answer
   * from the server (accepted or refused) ends the loop; three connection failures fail it.
   */
  async function psqlReached(name: string, pw: string): Promise<{ phase: string; logs: string }> {
    let r = { phase: "", logs: "" };
    for (let attempt = 1; attempt <= 3; attempt++) {
      r = await psql(`${name}-${attempt}`, pw);
      if (r.phase === "Succeeded" || !/could not connect|timeout expired|Connection refused/i.test(r.logs)) {
        return r;
      }
    }
    return r;
  }

  it("accepts the generated password and refuses a wrong one", async () => {
    const ok = await psqlReached("psql-good", password);
    expect(ok.phase, ok.logs).toBe("Succeeded");
    expect(ok.logs.trim()).toBe("app@appdb");
    const bad = await psqlReached("psql-bad", `${password}x`);
    expect(bad.phase, bad.logs).toBe("Failed");
    expect(bad.logs).toContain('password authentication failed for user "app"');
    const pvc = await kubectl(["get", "pvc", "data-db-0", "-o", "jsonpath={.status.phase}"], {
      namespace: ns.name,
    });
    expect(pvc.stdout).toBe("Bound");
  }, 300_000);
});
