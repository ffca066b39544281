import type { KubeTransport } from "../../runtime/rest.ts";

/** Reads a container's log (stdout and stderr interleaved, as the kubelet stores them). */
export interface PodLogReader {
  /** The first `limitBytes` bytes of the log. */
  head(namespace: string, pod: string, container: string, limitBytes: number): Promise<string>;
  /** The last `lines` lines of the log. */
  tail(namespace: string, pod: string, container: string, lines: number): Promise<string>;
}

/** PodLogReader over the API server (pods/log subresource, plain text). */
export class KubePodLogReader implements PodLogReader {
  private readonly transport: KubeTransport;

  constructor(transport: KubeTransport) {
    this.transport = transport;
  }

  head(namespace: string, pod: string, container: string, limitBytes: number): Promise<string> {
    return this.read(namespace, pod, { container, limitBytes });
  }

  tail(namespace: string, pod: string, container: string, lines: number): Promise<string> {
    return this.read(namespace, pod, { container, tailLines: lines });
  }

  private read(namespace: string, pod: string, query: Record<string, string | number>): Promise<string> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log`;
    // The answer is plain text, but the API server negotiates the subresource like any other:
    // it refuses an Accept of text/plain (406), so the default (application/json) is sent.
    return this.transport.text("GET", path, { query });
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
