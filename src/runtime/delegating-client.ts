import type { ApplyOptions, DeleteOptions, KubeClient } from "./client.ts";
import type { KubeObject } from "./types.ts";

/**
 * A client that passes every call to `inner`. Wrappers (the leader gate, the recording of a
 * pass's applies) extend it and override only the calls they change.
 */
export class DelegatingClient implements KubeClient {
  protected readonly inner: KubeClient;

  constructor(inner: KubeClient) {
    this.inner = inner;
  }

  get<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, name: string) {
    return this.inner.get<T>(apiVersion, kind, namespace, name);
  }

  list<T extends KubeObject>(apiVersion: string, kind: string, namespace?: string, labelSelector?: string) {
    return this.inner.list<T>(apiVersion, kind, namespace, labelSelector);
  }

  getRaw<T>(path: string, query?: Record<string, string>) {
    return this.inner.getRaw<T>(path, query);
  }

  apply<T extends KubeObject>(obj: KubeObject, opts?: ApplyOptions) {
    return this.inner.apply<T>(obj, opts);
  }

  applyStatus<T extends KubeObject>(obj: KubeObject) {
    return this.inner.applyStatus<T>(obj);
  }

  create<T extends KubeObject>(obj: KubeObject) {
    return this.inner.create<T>(obj);
  }

  replace<T extends KubeObject>(obj: KubeObject) {
    return this.inner.replace<T>(obj);
  }

  delete(apiVersion: string, kind: string, namespace: string, name: string, opts?: DeleteOptions) {
    return this.inner.delete(apiVersion, kind, namespace, name, opts);
  }
}
