import { beforeAll, describe, expect, it } from "vitest";
import { clusterEnv, kubectl, useNamespace } from "../../support/cluster.ts";
import { apply, deploymentReady, nodeImages, runPod, skipReason, webApp } from "./support.ts";

// dns add-on: CoreDNS answers cluster.local names to pods on the real node, and a pod reaches
// another through its Service's ClusterIP by name.

const reason = await skipReason("dns");

describe.skipIf(reason)("dns add-on (CoreDNS)", () => {
  const ns = useNamespace("dns");
  let python = "";

  beforeAll(async () => {
    python = nodeImages("python").python;
    await apply(ns.name, webApp("echo", python, "dns-test"));
    await deploymentReady(ns.name, "echo");
  }, 180_000);

  it("resolves Service names from a pod", async () => {
    const svcIP = (
      await kubectl(["get", "service", "echo", "-o", "jsonpath={.spec.clusterIP}"], { namespace: ns.name })
    ).stdout;
    const apiIP = (
      await kubectl(["get", "service", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP}"])
    ).stdout;
    const script = [
      "import socket",
      `for n in ["echo", "echo.${ns.name}", "echo.${ns.name}.svc.cluster.local", "kubernetes.default.svc.cluster.local"]:`,
      "    print(n, socket.gethostbyname(n))",
      "print(open('/etc/resolv.conf').read())",
    ].join("\n");
    const out = await runPod(ns.name, "resolve", python, ["python3", "-c", script]);
    expect(out).toContain(`echo ${svcIP}\n`);
    expect(out).toContain(`echo.${ns.name} ${svcIP}\n`);
    expect(out).toContain(`echo.${ns.name}.svc.cluster.local ${svcIP}\n`);
    expect(out).toContain(`kubernetes.default.svc.cluster.local ${apiIP}\n`);
    // The kubelet hands pods the Service IP of the add-on's CoreDNS.
    expect(out).toContain(`nameserver ${clusterEnv().CLUSTER_DNS_IP}`);
  }, 180_000);

  it("answers NXDOMAIN for a Service that does not exist", async () => {
    const script = [
      "import socket",
      "try:",
      `    socket.gethostbyname("missing.${ns.name}.svc.cluster.local"); print("resolved")`,
      "except socket.gaierror as e:",
      "    print('error', e.errno == socket.EAI_NONAME)",
    ].join("\n");
    const out = await runPod(ns.name, "nxdomain", python, ["python3", "-c", script]);
    expect(out.trim()).toBe("error True");
  }, 180_000);

  it("reaches a ClusterIP Service from another pod by its DNS name", async () => {
    const script = [
      "import urllib.request",
      `print(urllib.request.urlopen("http://echo.${ns.name}.svc.cluster.local/via-service", timeout=10).read().decode(), end="")`,
    ].join("\n");
    const out = await runPod(ns.name, "client", python, ["python3", "-c", script]);
    // The body names the serving pod: it came from the Deployment's pod, through the Service.
    const pod = (
      await kubectl(["get", "pods", "-l", "app=echo", "-o", "jsonpath={.items[0].metadata.name}"], {
        namespace: ns.name,
      })
    ).stdout;
    expect(out).toBe(`dns-test ${pod} /via-service\n`);
  }, 180_000);
});
