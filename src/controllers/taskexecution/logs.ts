import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";

/** Reads a container's log (stdout and stderr interleaved, as the kubelet stores them). */
export interface PodLogReader {
  /** The first `limitBytes` bytes of the log. */
  head(namespace: string, pod: string, container: string, limitBytes: number): Promise<string>;
  /** The last `lines` lines of the log. */
  tail(namespace: string, pod: string, container: string, lines: number): Promise<string>;
}

/** PodLogReader over the API server (pods/log subresource, plain text). */
export class KubePodLogReader implements PodLogReader {
  private readonly api: CoreV1Api;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CoreV1Api);
  }

  async head(namespace: string, pod: string, container: string, limitBytes: number): Promise<string> {
    return String(await this.api.readNamespacedPodLog({ name: pod, namespace, container, limitBytes }));
  }

  async tail(namespace: string, pod: string, container: string, lines: number): Promise<string> {
    return String(await this.api.readNamespacedPodLog({ name: pod, namespace, container, tailLines: lines }));
  }
}

/** In-memory PodLogReader for unit tests: logs keyed by "namespace/pod/container". */
export class MemoryPodLogReader implements PodLogReader {
  readonly logs = new Map<string, string>();

  async head(namespace: string, pod: string, container: string, limitBytes: number): Promise<string> {
    const text = this.logs.get(`${namespace}/${pod}/${container}`) ?? "";
    return Buffer.from(text, "utf8").subarray(0, limitBytes).toString("utf8");
  }

  async tail(namespace: string, pod: string, container: string, lines: number): Promise<string> {
    const text = this.logs.get(`${namespace}/${pod}/${container}`) ?? "";
    const all = text.split("\n");
    return all.slice(Math.max(0, all.length - lines - 1)).join("\n");
  }
}
