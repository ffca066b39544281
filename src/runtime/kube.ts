import { KubeConfig } from "@kubernetes/client-node/dist/config.js";
import type { Logger } from "pino";
import { RealKubeClient } from "./client.ts";
import { KubeListWatch } from "./listwatch.ts";
import { Manager, type ManagerOptions } from "./manager.ts";
import { KubeTransport, type TransportOptions } from "./rest.ts";

/** Loads a kubeconfig: an explicit path, else KUBECONFIG / in-cluster / ~/.kube/config. */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

/** The real client and list/watch factory for a kubeconfig. */
export function kubeConnection(
  kc: KubeConfig,
  opts: TransportOptions = {},
): {
  transport: KubeTransport;
  client: RealKubeClient;
  sourceFor: ManagerOptions["sourceFor"];
} {
  return connectionOver(KubeTransport.create(kc, opts));
}

function connectionOver(transport: KubeTransport): ReturnType<typeof kubeConnection> {
  return {
    transport,
    client: new RealKubeClient(transport),
    sourceFor: (type, namespace, opts) => new KubeListWatch(transport, type, namespace, opts?.metadataOnly),
  };
}

/** A Manager talking to the cluster through `transport`. */
export function createKubeManager(
  transport: KubeTransport,
  opts: Omit<ManagerOptions, "client" | "sourceFor"> & { log: Logger },
): Manager {
  const { client, sourceFor } = connectionOver(transport);
  return new Manager({ ...opts, client, sourceFor });
}
