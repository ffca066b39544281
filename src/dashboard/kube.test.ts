import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { KubeViewerApi, quantity } from "./kube.ts";

describe("quantity", () => {
  it("reads the metrics API's CPU and memory quantities", () => {
    expect(quantity("250m")).toBeCloseTo(0.25);
    expect(quantity("12500000n")).toBeCloseTo(0.0125);
    expect(quantity("2")).toBe(2);
    expect(quantity("512Mi")).toBe(512 * 1024 ** 2);
    expect(quantity("1.5Gi")).toBe(1.5 * 1024 ** 3);
    expect(quantity("100k")).toBe(100_000);
    expect(quantity("lots")).toBeNaN();
  });
});

// podMetricsTexts against a stand-in API server on loopback (real HTTP, the viewer's token).
describe("podMetricsTexts", () => {
  const pod = (name: string, ready: boolean, port?: number) => ({
    metadata: { name },
    spec: { containers: [{ name: "app", ports: port ? [{ name: "http", containerPort: port }] : [] }] },
    status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  });
  async function apiServer(proxyStatus: number) {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.headers.authorization} ${req.url}`);
      if (req.url?.startsWith("/api/v1/namespaces/shop/pods?")) {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            items: [pod("a", true, 8080), pod("b", false, 8080), pod("c", true, 8080), pod("d", true)],
          }),
        );
      } else if (req.url === "/api/v1/namespaces/shop/pods/a:8080/proxy/metrics") {
        res.statusCode = proxyStatus;
        res.end(proxyStatus === 200 ? "# TYPE x counter\nx 1\n" : '{"kind":"Status","reason":"Forbidden"}');
      } else {
        res.statusCode = 503; // pod c: not answering
        res.end("{}");
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: "c",
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: "u" }],
      contexts: [{ name: "c", cluster: "c", user: "u" }],
      currentContext: "c",
    });
    return { api: new KubeViewerApi(kc, "viewer-token"), seen, close: () => server.close() };
  }

  it("reads each ready pod's http port through the pod proxy as the viewer, leaving out pods that do not answer", async () => {
    const s = await apiServer(200);
    try {
      const texts = await s.api.podMetricsTexts("shop", "app=x", "/metrics");
      expect([...texts]).toEqual([["a", "# TYPE x counter\nx 1\n"]]);
      expect(s.seen).toContain("Bearer viewer-token /api/v1/namespaces/shop/pods/a:8080/proxy/metrics");
      expect(s.seen).toContain("Bearer viewer-token /api/v1/namespaces/shop/pods/c:8080/proxy/metrics");
      expect(s.seen.some((x) => x.includes("/pods/b:"))).toBe(false); // not ready
      expect(s.seen.filter((x) => x.startsWith("Bearer viewer-token ")).length).toBe(s.seen.length);
    } finally {
      s.close();
    }
  });

  it("a 403 from the pod proxy is the viewer's refusal, not a pod left out", async () => {
    const s = await apiServer(403);
    try {
      await expect(s.api.podMetricsTexts("shop", "app=x", "/metrics")).rejects.toMatchObject({
        statusCode: 403,
      });
    } finally {
      s.close();
    }
  });
});
