import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import client from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { installNetworkMetrics, netDevTotals } from "../src/http/netdev.ts";

const dir = mkdtempSync(join(tmpdir(), "netdev-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const netdev = (
  eth0: [number, number],
) => `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:  900000    1000    0    0    0     0          0         0   900000    1000    0    0    0     0       0          0
  eth0: ${eth0[0]}     310    0    0    0     0          0         0 ${eth0[1]}     250    0    0    0     0       0          0
 tunl0:     100       1    0    0    0     0          0         0       20       1    0    0    0     0       0          0
`;

describe("pod network counters", () => {
  it("sums bytes over the interfaces other than loopback", () => {
    expect(netDevTotals(netdev([5000, 7000]))).toEqual({ receiveBytes: 5100, transmitBytes: 7020 });
    expect(netDevTotals("")).toEqual({ receiveBytes: 0, transmitBytes: 0 });
  });

  it("reads the file at every scrape and exposes the kernel's totals as counters", async () => {
    const path = join(dir, "dev");
    writeFileSync(path, netdev([5000, 7000]));
    const registry = new client.Registry();
    expect(installNetworkMetrics(registry, path)).toBe(true);
    expect(await registry.metrics()).toContain("commerce_pod_network_receive_bytes_total 5100");
    writeFileSync(path, netdev([65000, 9000]));
    const text = await registry.metrics();
    expect(text).toContain("# TYPE commerce_pod_network_receive_bytes_total counter");
    expect(text).toContain("commerce_pod_network_receive_bytes_total 65100");
    expect(text).toContain("commerce_pod_network_transmit_bytes_total 9020");
  });

  it("registers nothing where the file cannot be read", async () => {
    const registry = new client.Registry();
    expect(installNetworkMetrics(registry, join(dir, "missing"))).toBe(false);
    expect(await registry.metrics()).not.toContain("network");
  });
});
