import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

// Webhook destinations must be public addresses: loopback, private, link-local, unique-local,
// carrier-grade NAT and other special ranges are refused (no reaching into the cluster or the
// cloud metadata service), unless an allowed CIDR (COMMERCE_WEBHOOK_ALLOWED_CIDRS) contains the
// address. The check runs in the connection's own DNS lookup, so the address checked is the
// address connected to (a name re-resolving to a private address later cannot slip through).

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export function parseCidrs(list: string[]): Cidr[] {
  return list.map((c) => ipaddr.parseCIDR(c));
}

/** Why `address` may not be a destination, or undefined when it may. */
export function refusal(address: string, allowed: Cidr[]): string | undefined {
  let ip = ipaddr.parse(address);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (allowed.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return undefined;
  const range = ip.range();
  return range === "unicast"
    ? undefined
    : `${address} is a ${range} address (not allowed as a webhook destination)`;
}

export class DestinationRefused extends Error {}

/** A `lookup` for http.request that resolves and refuses disallowed addresses. */
export function guardedLookup(allowed: Cidr[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, "", 4);
      for (const a of addresses) {
        const why = refusal(a.address, allowed);
        if (why) return callback(new DestinationRefused(`${hostname}: ${why}`), "", 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname}: no address`), "", 4);
      callback(null, first.address, first.family);
    });
  };
}
