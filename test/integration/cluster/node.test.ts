import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { BatchV1Api, CoreV1Api, type V1Job, type V1Pod, VersionApi } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { clusterEnv, hasClusterEnv, kubeConfig, useNamespace, waitFor } from "../../support/cluster.ts";
import { imageRef } from "../../support/images.ts";

// What the real node does with pods: scripts from ConfigMaps under the restricted profile, exit
// codes, deadlines, memory limits, and in-cluster access to the API through the Service.

// Pod Security "restricted" enforced: the script Job must pass admission as it is.
const ns = useNamespace("node", { "pod-security.kubernetes.io/enforce": "restricted" });
const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const batch = kc.makeApiClient(BatchV1Api);
const shell = imageRef("shell");

/** The container security context the restricted profile asks for. */
const restricted = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ["ALL"] },
};
const podSecurity = { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } };

/** A one-container, never-retried Job running `script` with bash. */
function job(
  name: string,
  script: string,
  extra: { activeDeadlineSeconds?: number; memory?: string } = {},
): V1Job {
  return {
    metadata: { name },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: extra.activeDeadlineSeconds,
      template: {
        spec: {
          restartPolicy: "Never",
          terminationGracePeriodSeconds: 2,
          securityContext: podSecurity,
          containers: [
            {
              name: "main",
              image: shell,
              command: ["/bin/bash", "-c", script],
              securityContext: restricted,
              resources: extra.memory ? { limits: { memory: extra.memory, cpu: "500m" } } : undefined,
            },
          ],
        },
      },
    },
  };
}

/** Waits until the Job has a Complete or Failed condition and returns it. */
async function finished(name: string, timeoutMs = 120_000): Promise<V1Job> {
  return waitFor(
    async () => {
      const j = await batch.readNamespacedJob({ name, namespace: ns.name });
      const done = j.status?.conditions?.find(
        (c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True",
      );
      return done ? j : undefined;
    },
    { timeoutMs, what: `Job ${name} to finish` },
  );
}

/** The pods of a Job. */
async function jobPods(name: string): Promise<V1Pod[]> {
  const list = await core.listNamespacedPod({ namespace: ns.name, labelSelector: `job-name=${name}` });
  return list.items;
}

describe("the real node", () => {
  it("runs a ConfigMap script under the restricted profile with env vars; output via the API", async () => {
    const script = [
      "#!/bin/bash",
      "set -euo pipefail",
      'echo "greeting=$GREETING"',
      'echo "uid=$(id -u)"',
      "if touch /probe 2>/dev/null; then echo rootfs=writable; else echo rootfs=read-only; fi",
      'grep -E "^(CapEff|Seccomp):" /proc/self/status | sed -E "s/:[[:space:]]+/=/"',
      "echo done",
    ].join("\n");
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name: "script" }, data: { "run.sh": script } },
    });
    const j = job("script", "");
    const pod = j.spec?.template.spec;
    const c = pod?.containers[0];
    if (!pod || !c) throw new Error("bad job template");
    c.command = ["/bin/bash", "/scripts/run.sh"];
    c.env = [{ name: "GREETING", value: "hello from env" }];
    c.volumeMounts = [{ name: "scripts", mountPath: "/scripts", readOnly: true }];
    pod.volumes = [{ name: "scripts", configMap: { name: "script", defaultMode: 0o555 } }];
    await batch.createNamespacedJob({ namespace: ns.name, body: j });

    const done = await finished("script");
    expect(done.status?.succeeded).toBe(1);
    const [p] = await jobPods("script");
    if (!p?.metadata?.name) throw new Error("no pod for Job script");
    const logs = await core.readNamespacedPodLog({ name: p.metadata.name, namespace: ns.name });
    expect(logs.split("\n")).toEqual(
      expect.arrayContaining([
        "greeting=hello from env",
        "uid=65532",
        "rootfs=read-only",
        "CapEff=0000000000000000",
        "Seccomp=2",
        "done",
      ]),
    );
    expect(p.spec?.nodeName).toBe(clusterEnv().NODE_NAME);
  });

  it("reports a non-zero exit code", async () => {
    await batch.createNamespacedJob({ namespace: ns.name, body: job("exit3", "echo failing; exit 3") });
    const done = await finished("exit3");
    expect(done.status?.failed).toBe(1);
    const failed = done.status?.conditions?.find((c) => c.type === "Failed");
    expect(failed?.reason).toBe("BackoffLimitExceeded");
    const [p] = await jobPods("exit3");
    const term = p?.status?.containerStatuses?.[0]?.state?.terminated;
    expect(term?.exitCode).toBe(3);
    expect(term?.reason).toBe("Error");
  });

  it("kills a sleeping pod at activeDeadlineSeconds", async () => {
    const started = Date.now();
    await batch.createNamespacedJob({
      namespace: ns.name,
      body: job("deadline", "sleep 3600", { activeDeadlineSeconds: 5 }),
    });
    // The pod really runs first (so it is the deadline that ends it, not a failed start).
    await waitFor(async () => (await jobPods("deadline")).some((p) => p.status?.phase === "Running"), {
      what: "the deadline pod to run",
    });
    const done = await finished("deadline");
    expect(done.status?.conditions?.find((c) => c.type === "Failed")?.reason).toBe("DeadlineExceeded");
    // The pod is killed and removed well before its hour of sleep (grace period 2 s).
    await waitFor(async () => (await jobPods("deadline")).length === 0, {
      timeoutMs: 60_000,
      what: "the deadline pod to be gone",
    });
    expect(Date.now() - started).toBeLessThan(90_000);
  });

  it("OOM-kills a pod above its memory limit", async () => {
    // tail keeps every byte of a newline-free stream in memory: it grows until the limit.
    await batch.createNamespacedJob({
      namespace: ns.name,
      body: job("oom", "tail /dev/zero", { memory: "32Mi" }),
    });
    await finished("oom");
    const [p] = await jobPods("oom");
    const term = p?.status?.containerStatuses?.[0]?.state?.terminated;
    expect(term?.reason).toBe("OOMKilled");
    expect(term?.exitCode).toBe(137);
  });

  it("lets a pod read /version through the kubernetes Service with its token", async (ctx) => {
    if (!hasClusterEnv()) {
      ctx.skip("needs the local node's containerd to load the kubeprobe image (user cluster in KUBECONFIG)");
    }
    // kubeprobe: a static Go client (hack/images/kubeprobe) loaded into the node's containerd.
    const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
    const ref = execFileSync("bash", [`${repoRoot}hack/images/load.sh`, "kubeprobe"], {
      encoding: "utf8",
      env: { ...process.env, CONTAINERD_ADDRESS: clusterEnv().CONTAINERD_ADDRESS },
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
    await core.createNamespacedPod({
      namespace: ns.name,
      body: {
        metadata: { name: "kubeprobe" },
        spec: {
          restartPolicy: "Never",
          securityContext: podSecurity,
          containers: [{ name: "probe", image: ref, securityContext: restricted }],
        },
      },
    });
    const phase = await waitFor(
      async () => {
        const p = await core.readNamespacedPod({ name: "kubeprobe", namespace: ns.name });
        const ph = p.status?.phase;
        return ph === "Succeeded" || ph === "Failed" ? ph : undefined;
      },
      { timeoutMs: 120_000, what: "kubeprobe to finish" },
    );
    const logs = await core.readNamespacedPodLog({ name: "kubeprobe", namespace: ns.name });
    expect(phase, logs).toBe("Succeeded");
    const out = JSON.parse(logs) as { server: string; gitVersion: string; username: string };
    const svc = await core.readNamespacedService({ name: "kubernetes", namespace: "default" });
    const port = svc.spec?.ports?.[0]?.port;
    expect(out.server).toBe(`https://${svc.spec?.clusterIP}:${port}`);
    const server = await kc.makeApiClient(VersionApi).getCode();
    expect(out.gitVersion).toBe(server.gitVersion);
    expect(out.username).toBe(`system:serviceaccount:${ns.name}:default`);
  });
});
