import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import { platformAppName } from "../../api/v1alpha1/names.ts";
import type { ScalePlatform, ScalePlatformSpec } from "../../api/v1alpha1/scaleplatform.ts";
import { readList, readOne } from "../../runtime/read.ts";
import type { KubeObject, ReconcileContext } from "../../runtime/types.ts";
import { platformHosts } from "./desired/common.ts";

// One host, one platform: an Ingress controller given two Ingresses with the same host routes
// each request to one of them by its own rules, so two shops would silently share a name. Of two
// platforms claiming a host, the one whose Ingress already serves it keeps it (a platform that
// changes its domains onto a live shop's host does not take the host over); when both or neither
// serve it, the older platform keeps it. The other is held until the host is free. The rule is
// the same from either side, so exactly one of them proceeds.

/** The other platform holding one of this platform's hosts. */
export interface HostClash {
  host: string;
  /** "namespace/name" of the platform that keeps the host. */
  holder: string;
}

interface Claimant {
  platform: ScalePlatform;
  hosts: string[];
  /** Hosts its live Ingress serves. */
  serving: Set<string>;
}

const keyOf = (p: ScalePlatform) => `${p.metadata.namespace ?? ""}/${p.metadata.name ?? ""}`;

/** Whether `a` keeps `host` over `b` (both claim it). */
function keeps(a: Claimant, b: Claimant, host: string): boolean {
  const aServes = a.serving.has(host);
  if (aServes !== b.serving.has(host)) return aServes;
  const at = a.platform.metadata.creationTimestamp ?? "";
  const bt = b.platform.metadata.creationTimestamp ?? "";
  if (at !== bt) return at < bt;
  return keyOf(a.platform) < keyOf(b.platform);
}

/** The first host of `me` another claimant keeps (pure). */
export function hostClash(me: Claimant, others: Claimant[]): HostClash | undefined {
  for (const host of me.hosts) {
    for (const other of others) {
      if (other.hosts.includes(host) && keeps(other, me, host))
        return { host, holder: keyOf(other.platform) };
    }
  }
  return undefined;
}

/** Hosts a live Ingress lists in its rules. */
function servedHosts(ingress: KubeObject | undefined): Set<string> {
  const rules = (ingress?.spec as { rules?: { host?: string }[] } | undefined)?.rules ?? [];
  return new Set(rules.map((r) => r.host).filter((h): h is string => h !== undefined));
}

/** Hosts of a stored platform's spec, or none when the spec is unreadable. */
function hostsOf(p: ScalePlatform): string[] {
  const domains = (p.spec as Partial<ScalePlatformSpec> | undefined)?.domains;
  if (!domains?.platform) return [];
  return Object.values(platformHosts(domains));
}

/**
 * Finds another platform (among those the operator watches) that keeps one of this platform's
 * hosts. Platforms being deleted claim nothing.
 */
export async function findHostClash(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  platform: ScalePlatform,
  spec: ScalePlatformSpec,
): Promise<HostClash | undefined> {
  const hosts = Object.values(platformHosts(spec.domains));
  const all = await readList<ScalePlatform>(ctx, cached, API_VERSION, "ScalePlatform", "", "");
  const rivals = all.filter(
    (p) =>
      p.metadata.uid !== platform.metadata.uid &&
      !p.metadata.deletionTimestamp &&
      hostsOf(p).some((h) => hosts.includes(h)),
  );
  if (rivals.length === 0) return undefined;
  const claimant = async (p: ScalePlatform, hs: string[]): Promise<Claimant> => {
    const ns = p.metadata.namespace ?? "";
    const ingress = await readOne(
      ctx,
      cached,
      "networking.k8s.io/v1",
      "Ingress",
      ns,
      platformAppName(p.metadata.name ?? ""),
    );
    return { platform: p, hosts: hs, serving: servedHosts(ingress) };
  };
  const others = await Promise.all(rivals.map((p) => claimant(p, hostsOf(p))));
  return hostClash(await claimant(platform, hosts), others);
}
