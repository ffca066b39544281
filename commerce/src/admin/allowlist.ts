import ipaddr from "ipaddr.js";

// The admin host's IP allow-list (COMMERCE_ADMIN_ALLOWED_CIDRS, the platform's
// spec.security.adminAllowedCIDRs). The client address is fastify's req.ip: with trustProxy it is
// the client named in X-Forwarded-For by the Ingress controller (which replaces a client-sent one).

type Net = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A predicate over client addresses; everyone passes when the list is empty. */
export function allowList(cidrs: string[]): (ip: string) => boolean {
  if (!cidrs.length) return () => true;
  const nets: Net[] = cidrs.map((c) => ipaddr.parseCIDR(c));
  return (raw) => {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.parse(raw);
    } catch {
      return false;
    }
    // An IPv4 client seen through an IPv6 socket (::ffff:a.b.c.d) is matched as IPv4.
    if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress())
      ip = (ip as ipaddr.IPv6).toIPv4Address();
    return nets.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  };
}
