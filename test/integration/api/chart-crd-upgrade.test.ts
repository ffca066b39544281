import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { buildCrd } from "../../../hack/gen/crd.ts";
import { findHelm } from "../../../hack/gen/crds.ts";
import { type CrdObject, crdTemplateOf } from "../../../hack/gen/render.ts";
import { scheduledTaskKind } from "../../../src/api/v1alpha1/scheduledtask.ts";
import {
  clusterEnv,
  hasClusterEnv,
  kubeconfigPath,
  kubectl,
  useNamespace,
  waitFor,
} from "../../support/cluster.ts";
import { repoRoot } from "./support.ts";

// The CRD-upgrade path of the chart: a field added to a CRD between two chart versions is served
// after `helm upgrade`. Helm never upgrades a chart's crds/ directory; the chart templates its
// CRDs (hack/gen/render.ts crdTemplateOf), and this test installs such a template and upgrades it.
//
// The real cronscale.io CRDs are shared by every test file, so this chart carries the
// ScheduledTask CRD, as generated, under a group of its own (<random>.cronscale.test); everything
// else (template wrapping, labels, keep annotation, helpers) is the chart's.

const execFileP = promisify(execFile);
const helm = hasClusterEnv() ? join(clusterEnv().BIN_DIR, "helm") : findHelm();
if (!helm)
  console.warn(
    "chart CRD upgrade test skipped: no helm binary (BIN_DIR, HELM or hack/cluster/build.sh helm)",
  );
const ns = useNamespace("crd-upgrade");
const group = `u${randomBytes(3).toString("hex")}.cronscale.test`;
const crdName = `scheduledtasks.${group}`;
const dir = mkdtempSync(join(tmpdir(), "cronscale-crd-upgrade-"));

afterAll(async () => {
  // crds.keep leaves the CRD after uninstall; it is this test's own group, so remove it.
  await kubectl(["delete", "crd", crdName, "--ignore-not-found", "--wait=false"], { allowFailure: true });
  rmSync(dir, { recursive: true, force: true });
});

async function runHelm(...args: string[]): Promise<string> {
  const { stdout } = await execFileP(helm!, [...args, "--kubeconfig", kubeconfigPath()], {
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** The chart at `version`: its helpers and values, and the ScheduledTask CRD template in `group`. */
function writeChart(version: string, addField: boolean): string {
  const chart = join(dir, `v${version}`);
  mkdirSync(join(chart, "templates/crds"), { recursive: true });
  const real = join(repoRoot, "charts/cronscale");
  const meta = parse(readFileSync(join(real, "Chart.yaml"), "utf8"));
  writeFileSync(join(chart, "Chart.yaml"), stringify({ ...meta, name: "cronscale", version }));
  copyFileSync(join(real, "templates/_helpers.tpl"), join(chart, "templates/_helpers.tpl"));
  const values = parse(readFileSync(join(real, "values.yaml"), "utf8"));
  writeFileSync(join(chart, "values.yaml"), stringify({ crds: values.crds }));

  const crd = buildCrd(scheduledTaskKind) as CrdObject & {
    spec: {
      group: string;
      versions: {
        schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } };
      }[];
    };
  };
  crd.metadata.name = crdName;
  crd.spec.group = group;
  if (addField)
    crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties.upgradeProbe = {
      type: "string",
      maxLength: 20,
      description: "A field added in the chart's next version.",
    };
  writeFileSync(join(chart, "templates/crds/scheduledtasks.yaml"), crdTemplateOf(crd));
  // Version 1 also renders a Secret, as charts did that made the archive's password with lookup;
  // version 2 does not (the operator makes it).
  if (!addField)
    writeFileSync(
      join(chart, "templates/secret.yaml"),
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-archive\nstringData:\n  password: old\n",
    );
  return chart;
}

const task = (name: string) =>
  stringify({
    apiVersion: `${group}/v1alpha1`,
    kind: "ScheduledTask",
    metadata: { name, namespace: ns.name },
    spec: {
      schedule: "0 3 * * *",
      timezone: "UTC",
      timeoutSeconds: 60,
      language: "Bash",
      plan: "Micro",
      script: "echo hi",
      upgradeProbe: "served",
    },
  });

async function createTask(name: string, validate: "strict" | "ignore") {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, task(name));
  return kubectl(["create", "-f", file, `--validate=${validate}`], { allowFailure: true });
}

const probeOf = async (name: string) =>
  (
    await kubectl(["get", `scheduledtasks.${group}`, name, "-o", "jsonpath={.spec.upgradeProbe}"], {
      namespace: ns.name,
    })
  ).stdout;

describe.skipIf(!helm)("helm upgrade upgrades the chart's CRDs", () => {
  it("a field added between two chart versions is served after helm upgrade; uninstall keeps the CRD and a Secret annotated keep", async () => {
    const release = `crd-${randomBytes(2).toString("hex")}`;
    await runHelm("install", release, writeChart("1.0.0", false), "-n", ns.name, "--wait");
    await kubectl(["wait", "--for=condition=Established", `crd/${crdName}`, "--timeout=60s"], {
      timeoutMs: 90_000,
    });
    const installed = JSON.parse((await kubectl(["get", "crd", crdName, "-o", "json"])).stdout);
    expect(installed.metadata.labels["app.kubernetes.io/managed-by"]).toBe("Helm");
    expect(installed.metadata.annotations["helm.sh/resource-policy"]).toBe("keep");

    // Version 1 does not know the field: without validation the API server prunes it, and strict
    // validation refuses it.
    await waitFor(async () => (await createTask("before", "ignore")).code === 0, {
      what: "the v1 CRD served",
      timeoutMs: 30_000,
    });
    expect(await probeOf("before")).toBe("");
    const refused = await createTask("probe-strict", "strict");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/unknown field "spec\.upgradeProbe"/);

    // The upgrade step charts/cronscale/README.md gives for such a Secret: annotated keep, the
    // upgrade that drops it from the chart leaves it (so the archive keeps its password).
    await kubectl(["annotate", "secret", `${release}-archive`, "helm.sh/resource-policy=keep"], {
      namespace: ns.name,
    });
    const out = await runHelm("upgrade", release, writeChart("1.1.0", true), "-n", ns.name, "--wait");
    expect(out).toMatch(/STATUS: deployed/);
    const secret = await kubectl(["get", "secret", `${release}-archive`, "-o", "jsonpath={.data.password}"], {
      namespace: ns.name,
    });
    expect(Buffer.from(secret.stdout, "base64").toString()).toBe("old");
    // The API server serves the new schema once the updated CRD is established (a moment).
    await waitFor(async () => (await createTask("after", "strict")).code === 0, {
      what: "the field of chart 1.1.0 accepted",
      timeoutMs: 60_000,
    });
    expect(await probeOf("after")).toBe("served");

    await runHelm("uninstall", release, "-n", ns.name, "--wait");
    const kept = await kubectl(["get", "crd", crdName, "-o", "name"], { allowFailure: true });
    expect(kept.code, "crds.keep leaves the CRD after helm uninstall").toBe(0);
    expect(await probeOf("after")).toBe("served");
  });
});
