import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/log.ts";
import { Informer } from "../../../src/runtime/informer.ts";
import { kubeConnection } from "../../../src/runtime/kube.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import { kubeConfig, useNamespace, waitFor } from "../../support/cluster.ts";

// The informer against a real API server: paginated list, watch events, selectors.

const ns = useNamespace("rt-informer");
const { client, transport } = kubeConnection(kubeConfig());

describe("Informer on ConfigMaps", () => {
  it("lists in pages, then sees create, update and delete", async () => {
    for (let i = 0; i < 7; i++) {
      await client.create({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `pre-${i}`, namespace: ns.name },
      });
    }
    const source = new KubeListWatch(transport, { apiVersion: "v1", kind: "ConfigMap" }, ns.name);
    const pages: (string | undefined)[] = [];
    const list = source.list.bind(source);
    source.list = (p) => {
      pages.push(p.continue);
      return list(p);
    };
    const inf = new Informer({ source, log: silentLogger(), pageSize: 3 });
    const seen: string[] = [];
    inf.addHandlers({
      onAdd: (o) => seen.push(`add ${o.metadata.name}`),
      onUpdate: (_, o) => seen.push(`update ${o.metadata.name} ${JSON.stringify(o.data ?? {})}`),
      onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
    });
    inf.start();
    await inf.waitForSync();
    // 7 ours + kube-root-ca.crt = 8 objects in pages of 3.
    expect(pages).toHaveLength(3);
    expect(pages[0]).toBeUndefined();
    expect(inf.list(ns.name).map((o) => o.metadata.name)).toContain("pre-6");

    seen.length = 0;
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "live", namespace: ns.name },
      data: { v: "1" },
    });
    await waitFor(() => seen.includes("add live"), { timeoutMs: 10_000, what: "add event" });
    await client.apply({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "live", namespace: ns.name },
      data: { v: "2" },
    });
    await waitFor(() => seen.includes('update live {"v":"2"}'), { timeoutMs: 10_000, what: "update event" });
    await client.delete("v1", "ConfigMap", ns.name, "live");
    await waitFor(() => seen.includes("delete live"), { timeoutMs: 10_000, what: "delete event" });
    expect(inf.get(`${ns.name}/live`)).toBeUndefined();
    expect(inf.lastEventTime).toBeInstanceOf(Date);
    await inf.stop();
  });

  it("filters server-side by label selector", async () => {
    const source = new KubeListWatch(transport, { apiVersion: "v1", kind: "ConfigMap" }, ns.name);
    const inf = new Informer({ source, log: silentLogger(), labelSelector: "pick=me" });
    const seen: string[] = [];
    inf.addHandlers({ onAdd: (o) => seen.push(o.metadata.name!) });
    inf.start();
    await inf.waitForSync();
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "skip", namespace: ns.name },
    });
    await client.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "picked", namespace: ns.name, labels: { pick: "me" } },
    });
    await waitFor(() => seen.includes("picked"), { timeoutMs: 10_000, what: "picked add" });
    expect(seen).toEqual(["picked"]);
    await inf.stop();
  });
});
