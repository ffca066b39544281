import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeConfig, VersionApi } from "@kubernetes/client-node";
import type { TestProject } from "vitest/node";

// Vitest global setup of the integration tier: one cluster per run, handed to every test file
// through provide/inject (see test/support/cluster.ts).
//  - KUBECONFIG set: that cluster is used (it must answer); the setup says which one it is.
//  - otherwise: a local cluster `cronscale-test-<pid>` is started with hack/cluster/up.sh
//    (KWOK_NODES from CRONSCALE_TEST_KWOK_NODES, ADDONS from CRONSCALE_TEST_ADDONS) and torn
//    down at the end unless CRONSCALE_KEEP_CLUSTER=1.

declare module "vitest" {
  export interface ProvidedContext {
    /** Path of the kubeconfig every test uses. */
    kubeconfig: string;
    /** Path of the local cluster's cluster.env, or "" on a user's own cluster. */
    clusterEnvPath: string;
    /** Directory of this run's hack/images/build.sh answers (see test/support/images.ts). */
    imageBuildsDir: string;
  }
}

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const clusterScripts = join(repoRoot, "hack", "cluster");
const clustersRoot = "/var/tmp/cronscale/clusters";
const testPrefix = "cronscale-test-";

/** Runs a cluster script, its progress going to our stderr; resolves with its stdout. */
function runScript(script: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [join(clusterScripts, script)], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`hack/cluster/${script} exited with ${code}`));
    });
  });
}

/** Test clusters whose vitest process is gone (killed runs) are removed before we start. */
async function removeOrphanTestClusters(): Promise<void> {
  if (!existsSync(clustersRoot)) return;
  for (const name of readdirSync(clustersRoot)) {
    const pid = Number(name.slice(testPrefix.length));
    if (!name.startsWith(testPrefix) || !Number.isInteger(pid) || pid === process.pid) continue;
    if (existsSync(`/proc/${pid}`)) continue; // another run is still using it
    // Kept on purpose (CRONSCALE_KEEP_CLUSTER=1), e.g. to be reused through KUBECONFIG.
    if (existsSync(join(clustersRoot, name, "kept"))) continue;
    process.stderr.write(`integration setup: removing orphaned test cluster ${name}\n`);
    await runScript("down.sh", { CLUSTER_NAME: name }).catch(() => undefined);
  }
}

/** Describes the cluster a kubeconfig points at, or throws when it does not answer. */
async function describeCluster(path: string): Promise<string> {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  const version = await kc.makeApiClient(VersionApi).getCode();
  return `context ${kc.getCurrentContext()} at ${kc.getCurrentCluster()?.server} (${version.gitVersion})`;
}

/**
 * A directory for the run's image build answers: images do not change during a run, so each is
 * resolved once (build.sh hashes its inputs) rather than in every test file. Removed at the end.
 */
function imageBuildsDir(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), "cronscale-image-builds-"));
  project.provide("imageBuildsDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const removeBuilds = imageBuildsDir(project);
  const userKubeconfig = process.env.KUBECONFIG;
  if (userKubeconfig) {
    const about = await describeCluster(userKubeconfig).catch((err: unknown) => {
      throw new Error(
        `KUBECONFIG=${userKubeconfig} does not answer (${String(err)}); unset KUBECONFIG to let the tests start their own local cluster`,
      );
    });
    // A kubeconfig of a cluster made by up.sh has its cluster.env next to it.
    const envPath = join(dirname(userKubeconfig), "cluster.env");
    const clusterEnvPath = existsSync(envPath) ? envPath : "";
    process.stderr.write(`integration setup: using KUBECONFIG=${userKubeconfig}: ${about}\n`);
    project.provide("kubeconfig", userKubeconfig);
    project.provide("clusterEnvPath", clusterEnvPath);
    return async () => removeBuilds();
  }

  await removeOrphanTestClusters();
  const name = `${testPrefix}${process.pid}`;
  const env = {
    CLUSTER_NAME: name,
    KWOK_NODES: process.env.CRONSCALE_TEST_KWOK_NODES ?? "0",
    ADDONS: process.env.CRONSCALE_TEST_ADDONS ?? "",
  };
  process.stderr.write(
    `integration setup: starting local cluster ${name} (KWOK_NODES=${env.KWOK_NODES} ADDONS=${env.ADDONS || "none"})\n`,
  );
  const started = Date.now();
  const teardown = async (): Promise<void> => {
    removeBuilds();
    if (process.env.CRONSCALE_KEEP_CLUSTER === "1") {
      writeFileSync(join(clustersRoot, name, "kept"), `kept by vitest run ${process.pid}\n`);
      process.stderr.write(
        `integration setup: keeping cluster ${name} (CLUSTER_NAME=${name} hack/cluster/down.sh removes it)\n`,
      );
      return;
    }
    await runScript("down.sh", { CLUSTER_NAME: name });
  };
  let kubeconfig: string;
  try {
    kubeconfig = (await runScript("up.sh", env)).trim().split("\n").pop() ?? "";
  } catch (first) {
    // One more try from scratch: a start-up that failed once (its log is above, e.g. a component
    // that did not answer in time) says nothing about the code under test. A second failure fails
    // the run.
    process.stderr.write(
      `integration setup: cluster start failed (${String(first)}); starting it once more\n`,
    );
    await runScript("down.sh", { CLUSTER_NAME: name }).catch(() => undefined);
    try {
      kubeconfig = (await runScript("up.sh", env)).trim().split("\n").pop() ?? "";
    } catch (err) {
      await teardown().catch(() => undefined);
      throw err;
    }
  }
  const about = await describeCluster(kubeconfig);
  process.stderr.write(
    `integration setup: cluster ${name} ready in ${((Date.now() - started) / 1000).toFixed(1)}s: ${about}\n`,
  );
  project.provide("kubeconfig", kubeconfig);
  project.provide("clusterEnvPath", join(dirname(kubeconfig), "cluster.env"));
  return teardown;
}
