import { readFileSync } from "node:fs";
import client from "prom-client";

// Network traffic of the pod: every container of a pod shares one network namespace, and
// /proc/net/dev, read from inside it, lists that namespace's interfaces (the pod's eth0, not the
// node's). The counters are the kernel's own totals since the interface came up, so they survive
// a process restart in the same pod and are summed over interfaces other than loopback (traffic
// between containers of the pod is not network use).

/** Received and transmitted bytes over the interfaces of a /proc/net/dev text, loopback left out. */
export function netDevTotals(text: string): { receiveBytes: number; transmitBytes: number } {
  let receiveBytes = 0;
  let transmitBytes = 0;
  // Two header lines, then `  <iface>: <8 receive fields> <8 transmit fields>`; bytes are the
  // first field of each group.
  for (const line of text.split("\n").slice(2)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const iface = line.slice(0, colon).trim();
    const fields = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (iface === "lo" || fields.length < 16) continue;
    receiveBytes += fields[0] || 0;
    transmitBytes += fields[8] || 0;
  }
  return { receiveBytes, transmitBytes };
}

/**
 * Registers `commerce_pod_network_{receive,transmit}_bytes_total`, read from `path` at every
 * scrape. Nothing is registered where the file cannot be read (not Linux).
 */
export function installNetworkMetrics(registry: client.Registry, path = "/proc/net/dev"): boolean {
  const read = () => netDevTotals(readFileSync(path, "utf8"));
  try {
    read();
  } catch {
    return false;
  }
  // A counter set to the kernel's total on each scrape: reset() and inc() keep it a counter for
  // the scraper (prom-client's Counter has no set()).
  const counter = (name: string, help: string, pick: (t: ReturnType<typeof read>) => number) =>
    new client.Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const t = read();
        this.reset();
        this.inc(pick(t));
      },
    });
  counter(
    "commerce_pod_network_receive_bytes_total",
    "Bytes the pod received over its network interfaces (loopback excluded).",
    (t) => t.receiveBytes,
  );
  counter(
    "commerce_pod_network_transmit_bytes_total",
    "Bytes the pod sent over its network interfaces (loopback excluded).",
    (t) => t.transmitBytes,
  );
  return true;
}
