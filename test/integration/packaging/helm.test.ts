import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { clusterEnv, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { imageRef, loadImages } from "../../support/images.ts";
import { installCrds } from "../api/support.ts";
import { executions, getTask, waitExecutions, waitTask } from "../scheduledtask/helpers.ts";
import {
  buildOperatorImage,
  dockerdRunning,
  helm,
  insideView,
  packagingSkipReason,
  readyPod,
  repoRoot,
  splitRef,
  stopDockerd,
  viaServiceProxy,
} from "./support.ts";

// The operator as users install it: its image built from ./Dockerfile by the project's Docker
// daemon on the local Node base, imported into the node, then `helm install` of the chart into a
// namespace enforcing Pod Security "restricted", and `kubectl apply -f manifests/install.yaml`.
// The in-cluster operator must become Ready (informers synced, through the kubernetes Service)
// and reconcile a sample ScheduledTask to Running and through one run.

const skip = packagingSkipReason();
if (skip) console.warn(`packaging tests skipped: ${skip}`);

const restricted = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
};
const opNs = useNamespace("helm-op", restricted);
const taskNs = useNamespace("helm-tasks");
const RELEASE = "cs";
// The operator's pods (the release also runs the archive's PostgreSQL, component=archive).
const SELECTOR = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=cronscale,app.kubernetes.io/component=operator`;

let operatorRef = "";
let bashRef = "";
let postgresRef = "";

beforeAll(() => {
  if (skip) return;
  const { CONTAINERD_ADDRESS } = clusterEnv();
  const wasRunning = dockerdRunning();
  const started = Date.now();
  try {
    operatorRef = buildOperatorImage(CONTAINERD_ADDRESS);
  } finally {
    // The daemon is only needed for the build; leave it as we found it.
    if (!wasRunning && dockerdRunning()) stopDockerd();
  }
  console.info(`operator image ${operatorRef} ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  bashRef = imageRef("bash");
  postgresRef = imageRef("postgres");
  loadImages(["bash", "postgres"], CONTAINERD_ADDRESS);
}, 1_200_000);

// The CRDs as the other test files install them (kubectl, shared by every file): the release
// installs with crds.enabled=false, so it need not own them (the chart's own CRD path is
// test/integration/api/chart-crd-upgrade.test.ts).
beforeAll(async () => {
  if (!skip) await installCrds();
}, 120_000);

afterAll(async () => {
  // A failed test may leave the release behind; its cluster-scoped RBAC would outlive the namespace.
  if (!skip)
    await helm("uninstall", RELEASE, "-n", opNs.name, "--ignore-not-found", "--wait").catch(() => undefined);
});

describe.skipIf(skip !== undefined)("operator image and chart on the local cluster", () => {
  it("the image is in the node's containerd under its content-addressed ref", () => {
    expect(operatorRef).toMatch(/^cronscale\.local\/operator:[0-9a-f]{12}$/);
    const listed = execFileSync(
      "ctr",
      ["-a", clusterEnv().CONTAINERD_ADDRESS, "-n", "k8s.io", "images", "ls", "-q", `name==${operatorRef}`],
      { encoding: "utf8" },
    );
    expect(listed.trim()).toBe(operatorRef);
  });

  it("helm install: the operator pod becomes Ready as leader, PSS restricted admits it", async () => {
    const { repository, tag } = splitRef(operatorRef);
    const out = await helm(
      "install",
      RELEASE,
      join(repoRoot, "charts/cronscale"),
      "-n",
      opNs.name,
      "--set",
      `image.repository=${repository}`,
      "--set",
      `image.tag=${tag}`,
      "--set",
      "image.pullPolicy=Never",
      "--set",
      `taskImages.bash=${bashRef}`,
      "--set",
      "taskImagePullPolicy=Never",
      "--set",
      "leaderElection.enabled=true",
      // The CRDs are shared by every test file and were applied with kubectl.
      "--set",
      "crds.enabled=false",
      // The chart's default archive (its own PostgreSQL) from the project's image: no registry here.
      "--set",
      `archive.postgres.image=${postgresRef}`,
      "--set",
      "archive.postgres.imagePullPolicy=Never",
      "--set",
      "archive.postgres.persistence.enabled=false",
      "--wait",
      "--timeout",
      "5m",
    );
    expect(out).toMatch(/STATUS: deployed/);
    const pod = await readyPod(opNs.name, SELECTOR);
    expect(pod.spec.containers[0]?.image).toBe(operatorRef);
    expect(pod.status.containerStatuses?.[0]?.restartCount).toBe(0);
    // Leader election is on: the pod holds the Lease under its own name.
    const holder = await waitFor(
      async () => {
        const r = await kubectl(
          ["get", "lease", `${RELEASE}-cronscale-leader`, "-o", "jsonpath={.spec.holderIdentity}"],
          {
            namespace: opNs.name,
            allowFailure: true,
          },
        );
        return r.code === 0 && r.stdout.trim() !== "" ? r.stdout.trim() : undefined;
      },
      { what: "lease holder", timeoutMs: 60_000 },
    );
    expect(holder).toBe(pod.metadata.name);
    // /readyz and /metrics through the metrics Service (the apiserver's service proxy).
    const svc = `${RELEASE}-cronscale-metrics:http-metrics`;
    expect(await viaServiceProxy(opNs.name, svc, "/readyz")).toBe("ok\n");
    const metrics = await viaServiceProxy(opNs.name, svc, "/metrics");
    expect(metrics).toMatch(/controller_runtime_reconcile_total|workqueue_depth/);
  });

  it("runs as non-root with a read-only root file system (pod spec and from inside)", async () => {
    const pod = await readyPod(opNs.name, SELECTOR);
    const c = pod.spec.containers[0];
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    expect(c?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    const inside = await insideView(pod);
    expect(inside.uid).toBe(65532);
    expect(inside.gid).toBe(65532);
    // Real, effective, saved and fs uid of PID 1 (the operator itself: node is the entrypoint).
    expect(inside.statusUid.split(/\s+/).slice(1)).toEqual(["65532", "65532", "65532", "65532"]);
    expect(inside.rootWrite).toBe("EROFS");
    expect(inside.tmpWrite).toBe("ok");
  });

  it("reconciles the bash sample: Running with its CronJob, and a run that succeeds", async () => {
    const sample = readFileSync(join(repoRoot, "manifests/samples/scheduledtask-bash.yaml"), "utf8");
    await kubectl(["apply", "-f", "-"], { namespace: taskNs.name, input: sample });
    const t = await waitTask(
      taskNs.name,
      "hello-bash",
      (x) => x.status?.phase === "Running",
      "Running",
      90_000,
    );
    expect(t.status?.phase).toBe("Running");
    const cj = JSON.parse(
      (await kubectl(["get", "cronjob", "hello-bash", "-o", "json"], { namespace: taskNs.name })).stdout,
    ) as {
      spec: {
        schedule: string;
        jobTemplate: {
          spec: { template: { spec: { containers: { image: string; imagePullPolicy: string }[] } } };
        };
      };
    };
    expect(cj.spec.schedule).toBe("* * * * *");
    const container = cj.spec.jobTemplate.spec.template.spec.containers[0];
    expect(container?.image).toBe(bashRef);
    expect(container?.imagePullPolicy).toBe("Never");
    // A run now, so the record comes from the in-cluster operator reading the pod's log.
    await kubectl(["annotate", "--overwrite", "stask", "hello-bash", "cronscale.io/run-now=helm-e2e"], {
      namespace: taskNs.name,
    });
    const [done] = await waitExecutions(
      taskNs.name,
      "hello-bash",
      (e) => e.spec.result === "Succeeded",
      1,
      180_000,
    );
    // The sample's inline env value (GREETING) is plain configuration, shown as written.
    expect(done?.spec.output).toMatch(/^hello from bash at \d{4}-\S+Z$/m);
    expect(done?.spec.output).toContain("this line goes to stderr");
    expect((await getTask(taskNs.name, "hello-bash"))?.status?.phase).toBe("Running");
  });

  it("helm uninstall removes the release's objects", async () => {
    await kubectl(["delete", "stask", "--all", "--wait"], { namespace: taskNs.name });
    await helm("uninstall", RELEASE, "-n", opNs.name, "--wait", "--timeout", "3m");
    // The pod is not a release object: it goes once the operator has drained (SIGTERM).
    await waitFor(
      async () => {
        const left = await kubectl(
          [
            "get",
            "deployment,serviceaccount,service,role,rolebinding,pods",
            "-l",
            `app.kubernetes.io/instance=${RELEASE}`,
            "-o",
            "name",
          ],
          { namespace: opNs.name },
        );
        return left.stdout.trim() === "";
      },
      { what: "release objects and operator pod gone", timeoutMs: 90_000 },
    );
    for (const kind of ["clusterrole", "clusterrolebinding"]) {
      const gone = await kubectl(["get", kind, `${RELEASE}-cronscale`], { allowFailure: true });
      expect(gone.code, `${kind} ${RELEASE}-cronscale still there`).not.toBe(0);
    }
    // Its records go with the task (owner references; the garbage collector deletes them).
    await waitFor(async () => (await executions(taskNs.name, "hello-bash")).length === 0, {
      what: "TaskExecutions of hello-bash gone",
    });
  });

  describe("kubectl apply -f manifests/install.yaml", () => {
    let dir = "";
    const manifest = () => join(dir, "install.yaml");
    const withoutCrds = () => join(dir, "install-without-crds.yaml");
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), "cronscale-install-"));
    });
    afterAll(async () => {
      // Everything but the CRDs: other test files share them (deleting a CRD deletes every
      // object of its kind in the cluster).
      await kubectl(["delete", "-f", withoutCrds(), "--ignore-not-found", "--wait"], {
        allowFailure: true,
        timeoutMs: 180_000,
      });
      rmSync(dir, { recursive: true, force: true });
    });

    it("with its image lines pointed at the local refs, the Deployment becomes Ready", async () => {
      // A textual edit of the generated file (what a user without kustomize would do with sed):
      // each replaced line must occur exactly once.
      let text = readFileSync(join(repoRoot, "manifests/install.yaml"), "utf8");
      const swaps: [RegExp, string][] = [
        [
          /image: "ghcr\.io\/cronscale\/cronscale:[^"]+"\n(\s+)imagePullPolicy: IfNotPresent/,
          `image: "${operatorRef}"\n$1imagePullPolicy: Never`,
        ],
        [/(SCHEDULED_TASK__IMAGES__BASH\n\s+value: )"[^"]*"/, `$1"${bashRef}"`],
        [/(SCHEDULED_TASK__IMAGE_PULL_POLICY\n\s+value: )"IfNotPresent"/, `$1"Never"`],
      ];
      for (const [re, to] of swaps) {
        expect(text.match(new RegExp(re.source, "g"))?.length, `${re} in install.yaml`).toBe(1);
        text = text.replace(re, to);
      }
      writeFileSync(manifest(), text);
      const docs = parseAllDocuments(text).filter(
        (d) => d.contents && d.get("kind") !== "CustomResourceDefinition",
      );
      writeFileSync(withoutCrds(), docs.map((d) => d.toString()).join("---\n"));

      await kubectl(["apply", "-f", manifest()], { timeoutMs: 180_000 });
      await kubectl(
        ["rollout", "status", "deployment/cronscale", "-n", "cronscale-system", "--timeout=180s"],
        {
          timeoutMs: 200_000,
        },
      );
      const pod = await readyPod("cronscale-system", "app.kubernetes.io/instance=cronscale");
      expect(pod.spec.containers[0]?.image).toBe(operatorRef);
      const labels = JSON.parse(
        (await kubectl(["get", "namespace", "cronscale-system", "-o", "jsonpath={.metadata.labels}"])).stdout,
      ) as Record<string, string>;
      expect(labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
      expect((await insideView(pod)).rootWrite).toBe("EROFS");
    });

    it("kubectl delete removes it again", async () => {
      await kubectl(["delete", "-f", withoutCrds(), "--wait"], { timeoutMs: 180_000 });
      const ns = await kubectl(["get", "namespace", "cronscale-system"], { allowFailure: true });
      expect(ns.code).not.toBe(0);
      const cr = await kubectl(["get", "clusterrole", "cronscale"], { allowFailure: true });
      expect(cr.code).not.toBe(0);
    });
  });
});
