import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig, type User } from "@kubernetes/client-node";

/** A kubeconfig for a loopback HTTP server of a unit test, with a bearer token. */
export function loopbackKubeConfig(port: number, token = "t0ken"): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", token }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

/**
 * A kubeconfig user whose credentials come from a real exec plugin (`node <script>`,
 * client.authentication.k8s.io/v1), written in a new folder under `dir`. `status` is a JavaScript
 * expression for the ExecCredential's status, which may use `run` (0 on the plugin's first run,
 * 1 on its second…); `runs()` counts the plugin's runs.
 */
export function execPluginUser(
  dir: string,
  status: string,
): { user: Omit<User, "name">; runs: () => number } {
  const sub = mkdtempSync(join(dir, "exec-"));
  const counter = join(sub, "runs");
  writeFileSync(counter, "0");
  const script = join(sub, "plugin.mjs");
  writeFileSync(
    script,
    `import { readFileSync, writeFileSync } from "node:fs";
const run = Number(readFileSync(${JSON.stringify(counter)}, "utf8"));
writeFileSync(${JSON.stringify(counter)}, String(run + 1));
const status = ${status};
process.stdout.write(JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status }));
`,
  );
  return {
    user: {
      exec: {
        apiVersion: "client.authentication.k8s.io/v1",
        command: process.execPath,
        args: [script],
        interactiveMode: "Never",
      },
    } as Omit<User, "name">,
    runs: () => Number(readFileSync(counter, "utf8")),
  };
}
