import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { clusterEnv, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { apply, containerSecurity, nodeImages, securityContext, skipReason } from "./support.ts";

// storage add-on: a PVC of the default StorageClass is provisioned by local-path-provisioner,
// binds, keeps what a pod wrote after that pod is deleted, and a new pod reads it back.

const reason = await skipReason("storage");

/** A pod mounting PVC `data` at /data and running `script` with bash. */
function pod(name: string, image: string, script: string): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: "Never",
      securityContext,
      terminationGracePeriodSeconds: 1,
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: "data" } }],
      containers: [
        {
          name: "main",
          image,
          imagePullPolicy: "Never",
          command: ["/bin/bash", "-c", script],
          volumeMounts: [{ name: "data", mountPath: "/data" }],
          securityContext: containerSecurity,
        },
      ],
    },
  };
}

async function succeeded(ns: string, name: string): Promise<string> {
  await waitFor(
    async () => {
      const r = await kubectl(["get", "pod", name, "-o", "jsonpath={.status.phase}"], { namespace: ns });
      if (r.stdout === "Failed") throw new Error(`pod ${name} failed`);
      return r.stdout === "Succeeded";
    },
    { timeoutMs: 150_000, intervalMs: 1_000, what: `pod ${name} to succeed` },
  );
  return (await kubectl(["logs", name], { namespace: ns })).stdout;
}

describe.skipIf(reason)("storage add-on (local-path-provisioner)", () => {
  const ns = useNamespace("storage");
  let shell = "";

  beforeAll(() => {
    shell = nodeImages("shell").shell;
  }, 120_000);

  it("binds a PVC of the default class; data outlives the pod that wrote it", async () => {
    const token = `written-${Date.now()}`;
    await apply(ns.name, [
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "data" },
        // No storageClassName: the default class must be used.
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "64Mi" } } },
      },
      pod("writer", shell, `echo ${token} > /data/file && sync && cat /data/file`),
    ]);
    expect((await succeeded(ns.name, "writer")).trim()).toBe(token);

    const pvc = JSON.parse(
      (await kubectl(["get", "pvc", "data", "-o", "json"], { namespace: ns.name })).stdout,
    ) as {
      spec: { storageClassName: string; volumeName: string };
      status: { phase: string };
    };
    expect(pvc.status.phase).toBe("Bound");
    expect(pvc.spec.storageClassName).toBe("local-path");
    const pv = JSON.parse((await kubectl(["get", "pv", pvc.spec.volumeName, "-o", "json"])).stdout) as {
      spec: { hostPath?: { path: string }; local?: { path: string } };
    };
    const path = pv.spec.hostPath?.path ?? pv.spec.local?.path ?? "";
    // The volume lives in the cluster's state dir on the node's filesystem.
    expect(path.startsWith(join(clusterEnv().STATE_DIR, "local-path"))).toBe(true);
    expect(existsSync(join(path, "file")) && readFileSync(join(path, "file"), "utf8").trim()).toBe(token);

    await kubectl(["delete", "pod", "writer", "--wait=true"], { namespace: ns.name });
    await apply(ns.name, [pod("reader", shell, "cat /data/file")]);
    expect((await succeeded(ns.name, "reader")).trim()).toBe(token);
  }, 240_000);
});
