import { beforeAll, describe, expect, it } from "vitest";
import { clusterEnv, kubectl, useNamespace } from "../../support/cluster.ts";
import { apply, deploymentReady, httpGetScript, nodeImages, runPod, skipReason, webApp } from "./support.ts";

// dns add-on: CoreDNS answers cluster.local names to pods on the real node, and a pod reaches
// another through its Service's ClusterIP by name.

const reason = await skipReason("dns");

describe.skipIf(reason)("dns add-on (CoreDNS)", () => {
  const ns = useNamespace("dns");
  let shell = "";

  beforeAll(async () => {
    const images = nodeImages("shell", "python");
    shell = images.shell;
    await apply(ns.name, webApp("echo", images.python));
    await deploymentReady(ns.name, "echo");
  }, 180_000);

  it("resolves Service names from a pod", async () => {
    const svcIP = (
      await kubectl(["get", "service", "echo", "-o", "jsonpath={.spec.clusterIP}"], { namespace: ns.name })
    ).stdout;
    const apiIP = (
      await kubectl(["get", "service", "kubernetes", "-n", "default", "-o", "jsonpath={.spec.clusterIP}"])
    ).stdout;
    const names = [
      "echo",
      `echo.${ns.name}`,
      `echo.${ns.name}.svc.cluster.local`,
      "kubernetes.default.svc.cluster.local",
    ];
    const script = `for n in ${names.join(" ")}; do echo "$n $(getent hosts "$n" | cut -d' ' -f1)"; done; cat /etc/resolv.conf`;
    const out = await runPod(ns.name, "resolve", shell, ["/bin/bash", "-c", script]);
    expect(out).toContain(`echo ${svcIP}\n`);
    expect(out).toContain(`echo.${ns.name} ${svcIP}\n`);
    expect(out).toContain(`echo.${ns.name}.svc.cluster.local ${svcIP}\n`);
    expect(out).toContain(`kubernetes.default.svc.cluster.local ${apiIP}\n`);
    // The kubelet hands pods the Service IP of the add-on's CoreDNS.
    expect(out).toContain(`nameserver ${clusterEnv().CLUSTER_DNS_IP}`);
  }, 180_000);

  it("answers NXDOMAIN for a Service that does not exist", async () => {
    // getent exits 2 when the name is unknown.
    const script = `getent hosts missing.${ns.name}.svc.cluster.local; echo "exit $?"`;
    const out = await runPod(ns.name, "nxdomain", shell, ["/bin/bash", "-c", script]);
    expect(out.trim()).toBe("exit 2");
  }, 180_000);

  it("reaches a ClusterIP Service from another pod by its DNS name", async () => {
    const out = await runPod(ns.name, "client", shell, [
      "/bin/bash",
      "-c",
      httpGetScript(`echo.${ns.name}.svc.cluster.local`, 80, "/"),
    ]);
    // The body names the serving pod: it came from the Deployment's pod, through the Service.
    const pod = (
      await kubectl(["get", "pods", "-l", "app=echo", "-o", "jsonpath={.items[0].metadata.name}"], {
        namespace: ns.name,
      })
    ).stdout;
    expect(out).toBe(`hello from ${pod}\n`);
  }, 180_000);
});
