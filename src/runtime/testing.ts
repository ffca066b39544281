import { KubeConfig } from "@kubernetes/client-node";

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
