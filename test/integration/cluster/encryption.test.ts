import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { clusterEnv, hasClusterEnv, kubectl, useNamespace } from "../../support/cluster.ts";
import { installCrds } from "../scheduledtask/operator.ts";

// What etcd really holds: the local cluster encrypts Secrets at rest (hack/cluster/up.sh), and a
// ScheduledTask's inline env value is plain text there, as its description says. Read straight
// from etcd through its JSON gateway (/v3/kv/range on the client URL, part of etcd itself).

const ns = useNamespace("at-rest");

/** The raw value etcd stores under `key`, or undefined when there is none. */
async function etcdValue(key: string): Promise<Buffer | undefined> {
  const res = await fetch(`${clusterEnv().ETCD_URL}/v3/kv/range`, {
    method: "POST",
    body: JSON.stringify({ key: Buffer.from(key).toString("base64") }),
  });
  if (!res.ok) throw new Error(`etcd range ${key}: HTTP ${res.status}`);
  const body = (await res.json()) as { kvs?: { value: string }[] };
  const value = body.kvs?.[0]?.value;
  return value === undefined ? undefined : Buffer.from(value, "base64");
}

describe("data at rest in the local cluster's etcd", () => {
  it("a Secret's value is stored encrypted (no plaintext, no base64 of it)", async (ctx) => {
    if (!hasClusterEnv() || !clusterEnv().ETCD_URL)
      ctx.skip("needs the etcd of a cluster made by hack/cluster/up.sh (user cluster in KUBECONFIG)");
    const plain = `plain-${randomBytes(12).toString("hex")}`;
    await kubectl(["create", "secret", "generic", "probe", `--from-literal=token=${plain}`], {
      namespace: ns.name,
    });
    // The API still answers the value (decrypted by the apiserver)...
    const got = await kubectl(["get", "secret", "probe", "-o", "jsonpath={.data.token}"], {
      namespace: ns.name,
    });
    expect(Buffer.from(got.stdout, "base64").toString()).toBe(plain);
    // ...while etcd holds ciphertext with the provider's prefix.
    const raw = await etcdValue(`/registry/secrets/${ns.name}/probe`);
    expect(raw, "the Secret is in etcd").toBeDefined();
    expect(raw?.subarray(0, 21).toString()).toBe("k8s:enc:secretbox:v1:");
    expect(raw?.includes(plain)).toBe(false);
    expect(raw?.includes(Buffer.from(plain).toString("base64"))).toBe(false);
  });

  it("a ScheduledTask's inline env value is plain text in etcd (hence the warning on it)", async (ctx) => {
    if (!hasClusterEnv() || !clusterEnv().ETCD_URL)
      ctx.skip("needs the etcd of a cluster made by hack/cluster/up.sh (user cluster in KUBECONFIG)");
    await installCrds();
    const plain = `inline-${randomBytes(12).toString("hex")}`;
    const task = {
      apiVersion: "cronscale.io/v1alpha1",
      kind: "ScheduledTask",
      metadata: { name: "inline" },
      spec: {
        schedule: "0 0 1 1 *",
        language: "Bash",
        script: "echo $V",
        plan: "Micro",
        suspend: true,
        env: [{ name: "V", value: plain }],
      },
    };
    await kubectl(["apply", "-f", "-"], { namespace: ns.name, input: stringify(task) });
    const raw = await etcdValue(`/registry/cronscale.io/scheduledtasks/${ns.name}/inline`);
    expect(raw?.includes(plain)).toBe(true);
  });
});
