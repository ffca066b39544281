import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { findHelm } from "../../../hack/gen/crds.ts";
import {
  clusterEnv,
  hasClusterEnv,
  kubeconfigPath,
  kubectl,
  useNamespace,
  waitFor,
} from "../../support/cluster.ts";
import { installCrds, repoRoot } from "./support.ts";

// The chart installed for real with helm: every object is accepted and created (RBAC included,
// which the apiserver checks for escalation), and uninstall removes them. Whether the operator
// pod becomes ready is the end-to-end test of the operator image, not this file's concern.

const execFileP = promisify(execFile);
const helm = hasClusterEnv() ? join(clusterEnv().BIN_DIR, "helm") : findHelm();
if (!helm)
  console.warn("chart install tests skipped: no helm binary (BIN_DIR, HELM or hack/cluster/build.sh helm)");
const ns = useNamespace("chart");

async function runHelm(...args: string[]): Promise<string> {
  const { stdout } = await execFileP(helm!, [...args, "--kubeconfig", kubeconfigPath()], {
    maxBuffer: 16 << 20,
  });
  return stdout;
}

beforeAll(async () => {
  await installCrds();
}, 120_000);

describe.skipIf(!helm)("helm install charts/cronscale", () => {
  it("passes a server-side dry run", async () => {
    const out = await runHelm(
      "install",
      "dry",
      `${repoRoot}charts/cronscale`,
      "-n",
      ns.name,
      // The CRDs are shared by every test file and were applied with kubectl (installCrds).
      "--set",
      "crds.enabled=false",
      "--dry-run=server",
    );
    expect(out).toMatch(/STATUS: pending-install/);
  });

  it("creates every object of the release and removes them on uninstall", async () => {
    await runHelm(
      "install",
      "cs",
      `${repoRoot}charts/cronscale`,
      "-n",
      ns.name,
      "--set",
      "replicaCount=0",
      "--set",
      "crds.enabled=false",
    );
    const got = await kubectl(
      [
        "get",
        "deployment,serviceaccount,service,role,rolebinding",
        "-l",
        "app.kubernetes.io/instance=cs",
        "-o",
        "name",
      ],
      { namespace: ns.name },
    );
    for (const o of [
      "deployment.apps/cs-cronscale",
      "serviceaccount/cs-cronscale",
      "service/cs-cronscale-metrics",
      "role.rbac.authorization.k8s.io/cs-cronscale-leader-election",
      "rolebinding.rbac.authorization.k8s.io/cs-cronscale-leader-election",
    ])
      expect(got.stdout).toContain(o);
    const cr = await kubectl(["get", "clusterrole", "cs-cronscale", "-o", "jsonpath={.rules[*].resources}"]);
    expect(cr.stdout).toContain("scaleplatforms");

    // The ServiceAccount can do what the operator needs and nothing broader.
    const sa = `system:serviceaccount:${ns.name}:cs-cronscale`;
    const can = async (...a: string[]) =>
      (await kubectl(["auth", "can-i", ...a, "--as", sa], { allowFailure: true })).stdout.trim();
    expect(await can("patch", "scaleplatforms.cronscale.io/status", "-A")).toBe("yes");
    expect(await can("create", "cronjobs.batch", "-n", "default")).toBe("yes");
    expect(await can("get", "pods", "--subresource=log", "-n", "default")).toBe("yes");
    expect(await can("update", "leases.coordination.k8s.io", "-n", ns.name)).toBe("yes");
    expect(await can("update", "leases.coordination.k8s.io", "-n", "default")).toBe("no");
    // Pods: read, and delete (a database pod a timed-out restore cutover left on a restored volume).
    expect(await can("delete", "pods", "-n", "default")).toBe("yes");
    expect(await can("create", "pods", "-n", "default")).toBe("no");
    expect(await can("create", "clusterroles.rbac.authorization.k8s.io")).toBe("no");
    expect(await can("delete", "nodes")).toBe("no");

    // Users: the aggregated roles make a namespace's editors able to create tasks and platforms,
    // and its viewers able to read them (aggregation into edit/view takes the controller a moment).
    await kubectl(["create", "rolebinding", "ed", "--clusterrole=edit", "--user=ed"], { namespace: ns.name });
    await kubectl(["create", "rolebinding", "vi", "--clusterrole=view", "--user=vi"], { namespace: ns.name });
    const user = async (u: string, ...a: string[]) =>
      (
        await kubectl(["auth", "can-i", ...a, "-n", ns.name, "--as", u], { allowFailure: true })
      ).stdout.trim();
    await waitFor(async () => (await user("ed", "create", "scheduledtasks.cronscale.io")) === "yes", {
      what: "edit aggregating cs-cronscale-edit",
    });
    expect(await user("ed", "create", "scaleplatforms.cronscale.io")).toBe("yes");
    expect(await user("ed", "create", "scaleplatformrestores.cronscale.io")).toBe("yes");
    expect(await user("ed", "update", "taskexecutions.cronscale.io")).toBe("no");
    expect(await user("ed", "patch", "scheduledtasks.cronscale.io", "--subresource=status")).toBe("no");
    await waitFor(async () => (await user("vi", "list", "taskexecutions.cronscale.io")) === "yes", {
      what: "view aggregating cs-cronscale-view",
    });
    expect(await user("vi", "get", "scaleplatforms.cronscale.io")).toBe("yes");
    expect(await user("vi", "create", "scheduledtasks.cronscale.io")).toBe("no");

    await runHelm("uninstall", "cs", "-n", ns.name, "--wait");
    const after = await kubectl(
      ["get", "deployment,serviceaccount,role", "-l", "app.kubernetes.io/instance=cs", "-o", "name"],
      {
        namespace: ns.name,
      },
    );
    expect(after.stdout.trim()).toBe("");
    const gone = await kubectl(["get", "clusterrole", "cs-cronscale"], { allowFailure: true });
    expect(gone.code).not.toBe(0);
  });
});
