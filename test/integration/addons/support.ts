import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { clusterEnv, hasClusterEnv, kubectl, parseEnvFile, waitFor } from "../../support/cluster.ts";
import { type ImageName, loadImages } from "../../support/images.ts";

// Shared by the add-on tests: which add-ons the cluster under test has (each test file skips,
// saying why, when its add-on is missing — e.g. on a user's own cluster or a run without
// CRONSCALE_TEST_ADDONS), the local images their pods use, and small pod/HTTP helpers.

/** Names of the add-ons of hack/cluster/addons. */
export type AddonName = "dns" | "ingress" | "cert-manager" | "metrics" | "custom-metrics" | "storage" | "s3";

async function exists(args: string[]): Promise<boolean> {
  return (
    (await kubectl(["get", ...args, "-o", "name"], { allowFailure: true, timeoutMs: 20_000 })).code === 0
  );
}

async function apiServiceAvailable(name: string): Promise<boolean> {
  const r = await kubectl(
    ["get", "apiservice", name, "-o", 'jsonpath={.status.conditions[?(@.type=="Available")].status}'],
    { allowFailure: true, timeoutMs: 20_000 },
  );
  return r.code === 0 && r.stdout.trim() === "True";
}

/** An env file an add-on wrote to the local cluster's state dir, or undefined. */
export function addonEnv(file: string): Record<string, string> | undefined {
  if (!hasClusterEnv()) return undefined;
  const path = join(clusterEnv().STATE_DIR, file);
  return existsSync(path) ? parseEnvFile(readFileSync(path, "utf8")) : undefined;
}

/**
 * Why the add-on's tests cannot run on the cluster under test, or undefined when they can. The
 * tests also need the local cluster itself (its images, loopback ports, state dir).
 */
export async function missingAddon(name: AddonName): Promise<string | undefined> {
  if (!hasClusterEnv()) {
    return `add-on ${name}: the cluster under test was not made by hack/cluster/up.sh (no local images or state dir)`;
  }
  const hint = `(start the suite with CRONSCALE_TEST_ADDONS=platform or ${name})`;
  let ok: boolean;
  switch (name) {
    case "dns":
      ok = await exists(["service", "kube-dns", "-n", "kube-system"]);
      break;
    case "ingress":
      ok = addonEnv("ingress.env") !== undefined;
      break;
    case "cert-manager":
      ok = await exists(["clusterissuer.cert-manager.io", "cronscale-ca"]);
      break;
    case "metrics":
      ok = await apiServiceAvailable("v1beta1.metrics.k8s.io");
      break;
    case "custom-metrics":
      ok =
        addonEnv("custom-metrics.env") !== undefined &&
        (await apiServiceAvailable("v1beta2.custom.metrics.k8s.io"));
      break;
    case "storage":
      ok = await exists(["storageclass", "local-path"]);
      break;
    case "s3":
      ok = addonEnv("s3.env") !== undefined && (await exists(["service", "s3", "-n", "kube-system"]));
      break;
  }
  return ok ? undefined : `add-on ${name} is not in the cluster under test ${hint}`;
}

/** missingAddon over several add-ons: the first reason, printed, or undefined. */
export async function skipReason(...names: AddonName[]): Promise<string | undefined> {
  for (const n of names) {
    const reason = await missingAddon(n);
    if (reason) {
      process.stderr.write(`skipping: ${reason}\n`);
      return reason;
    }
  }
  return undefined;
}

/** Loads local images into the real node and returns their refs by name. */
export function nodeImages<N extends ImageName>(...names: N[]): Record<N, string> {
  const refs = loadImages(names, clusterEnv().CONTAINERD_ADDRESS);
  return Object.fromEntries(names.map((n, i) => [n, refs[i]])) as Record<N, string>;
}

/**
 * A bash script for the `shell` image that sends one HTTP/1.0 GET to host:port/path through
 * bash's /dev/tcp (name resolution by glibc, i.e. the cluster DNS) and prints the response body.
 */
export function httpGetScript(host: string, port: number, path: string): string {
  return [
    `exec 3<>/dev/tcp/${host}/${port}`,
    `printf 'GET ${path} HTTP/1.0\\r\\nHost: ${host}\\r\\n\\r\\n' >&3`,
    // Body: everything after the blank line that ends the headers.
    "sed '1,/^\\r\\?$/d' <&3",
  ].join("\n");
}

/** Pod-level security settings every test pod uses (non-root, no privileges). */
export const securityContext = {
  runAsNonRoot: true,
  runAsUser: 65532,
  seccompProfile: { type: "RuntimeDefault" },
};

/** The container-level counterpart of securityContext. */
export const containerSecurity = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } };

/**
 * The add-on tests' HTTP server: a few lines of Python's standard library (the project's
 * `python` image), so these tests need "some HTTP server" and nothing of the commerce service.
 * `/` answers "hello from <pod>", `/burn?ms=N` keeps a CPU busy for N ms (at most 10 s), `/livez`
 * answers 200. Threaded, so concurrent burns use several cores.
 */
export const TINY_HTTP_SERVER = `
import os, socket, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/burn":
            ms = min(int(parse_qs(url.query).get("ms", ["100"])[0]), 10000)
            end = time.monotonic() + ms / 1000
            while time.monotonic() < end:
                pass
            body = f"burned {ms} ms\\n"
        elif url.path in ("/", "/livez"):
            body = f"hello from {socket.gethostname()}\\n"
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass

ThreadingHTTPServer(("", int(os.environ.get("PORT", "8080"))), Handler).serve_forever()
`;

/** A Deployment + Service (port 80 -> 8080) of TINY_HTTP_SERVER on the `python` image. */
export function webApp(name: string, pythonImage: string, extra: { cpu?: string } = {}): object[] {
  const labels = { app: name };
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            securityContext,
            terminationGracePeriodSeconds: 1,
            containers: [
              {
                name: "web",
                image: pythonImage,
                imagePullPolicy: "Never",
                command: ["python3", "-c", TINY_HTTP_SERVER],
                env: [{ name: "PORT", value: "8080" }],
                ports: [{ containerPort: 8080 }],
                readinessProbe: { httpGet: { path: "/livez", port: 8080 }, periodSeconds: 1 },
                securityContext: { ...containerSecurity, readOnlyRootFilesystem: true },
                resources: extra.cpu ? { requests: { cpu: extra.cpu }, limits: { cpu: "1" } } : undefined,
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, labels },
      spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    },
  ];
}

/** Applies objects (server-side) in the namespace. */
export async function apply(namespace: string, objects: object[]): Promise<void> {
  const input = objects.map((o) => JSON.stringify(o)).join("\n");
  await kubectl(["apply", "--server-side", "-f", "-"], { namespace, input });
}

/** Waits until the Deployment has `replicas` ready replicas. */
export async function deploymentReady(namespace: string, name: string, timeoutMs = 120_000): Promise<void> {
  await kubectl(["rollout", "status", `deployment/${name}`, `--timeout=${Math.round(timeoutMs / 1000)}s`], {
    namespace,
    timeoutMs: timeoutMs + 10_000,
  });
}

/** Runs a one-off pod with `command` to completion and returns its logs (throws on failure). */
export async function runPod(
  namespace: string,
  name: string,
  image: string,
  command: string[],
): Promise<string> {
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      restartPolicy: "Never",
      securityContext,
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: "main", image, imagePullPolicy: "Never", command, securityContext: containerSecurity },
      ],
    },
  };
  await apply(namespace, [pod]);
  const phase = await waitFor(
    async () => {
      const r = await kubectl(["get", "pod", name, "-o", "jsonpath={.status.phase}"], { namespace });
      return r.stdout === "Succeeded" || r.stdout === "Failed" ? r.stdout : undefined;
    },
    { timeoutMs: 120_000, what: `pod ${name} to finish` },
  );
  const logs = (await kubectl(["logs", name], { namespace })).stdout;
  if (phase !== "Succeeded") throw new Error(`pod ${name} failed: ${logs}`);
  return logs;
}

/** The replica count of a Deployment's status. */
export async function replicas(namespace: string, name: string): Promise<number> {
  const r = await kubectl(["get", "deployment", name, "-o", "jsonpath={.status.replicas}"], { namespace });
  return Number(r.stdout || "0");
}

const addonsDir = fileURLToPath(new URL("../../../hack/cluster/addons/", import.meta.url));

/**
 * Runs `hack/cluster/addons/<name>.sh <action>` on the local cluster under test (never on a
 * user's cluster: it needs the cluster.env of up.sh). Tests use it to take an add-on away and
 * bring it back; they run one file at a time, so no other file sees the gap.
 */
export function addonScript(name: AddonName, action: "up" | "down" | "uninstall"): Promise<void> {
  const { CLUSTER_NAME, STATE_DIR } = clusterEnv();
  // Without KUBECONFIG/BIN_DIR/NODE_NETNS, lib.sh reads them from the cluster's own cluster.env.
  const { KUBECONFIG: _k, BIN_DIR: _b, NODE_NETNS: _n, ...rest } = process.env;
  return new Promise((resolve, reject) => {
    execFile(
      "bash",
      [join(addonsDir, `${name}.sh`), action],
      { env: { ...rest, CLUSTER_NAME, STATE_DIR }, timeout: 300_000 },
      (err, _stdout, stderr) => {
        if (err) reject(new Error(`${name}.sh ${action} failed: ${err.message}\n${stderr}`));
        else resolve();
      },
    );
  });
}
