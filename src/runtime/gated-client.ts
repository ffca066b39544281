import type { ApplyOptions, DeleteOptions, KubeClient } from "./client.ts";
import { DelegatingClient } from "./delegating-client.ts";
import type { KubeObject } from "./types.ts";

/** Thrown when a write is attempted without holding the leader lease. */
export class NotLeaderError extends Error {
  constructor() {
    super("not the leader: write refused");
    this.name = "NotLeaderError";
  }
}

/**
 * Passes reads through and refuses writes unless `allowed()` holds. Reconcilers get this client,
 * so a reconcile still running when the lease is lost cannot write anything more.
 *
 * `allowed()` is checked when a write is called, and again right before its request is sent
 * (`withWriteFence` of the inner client): the transport awaits discovery and credentials and
 * may wait for a connection in between, and a process paused there past its renew deadline would
 * otherwise send, on resuming, a write it decided on while it still led.
 */
export class GatedKubeClient extends DelegatingClient {
  private readonly allowed: () => boolean;
  private readonly onWritten: (obj: KubeObject) => void;
  /** `inner` with the lease check bound to each write request (inner itself when it has no gap). */
  private readonly writer: KubeClient;

  /** `onWritten` gets each object the API server returns for a write (to update caches). */
  constructor(inner: KubeClient, allowed: () => boolean, onWritten: (obj: KubeObject) => void = () => {}) {
    super(inner);
    this.allowed = allowed;
    this.onWritten = onWritten;
    this.writer = inner.withWriteFence?.(() => this.check()) ?? inner;
  }

  private written<T extends KubeObject>(obj: T): T {
    this.onWritten(obj);
    return obj;
  }

  private check(): void {
    if (!this.allowed()) throw new NotLeaderError();
  }

  override async apply<T extends KubeObject>(obj: KubeObject, opts?: ApplyOptions) {
    this.check();
    return this.written(await this.writer.apply<T>(obj, opts));
  }

  override async applyStatus<T extends KubeObject>(obj: KubeObject) {
    this.check();
    return this.written(await this.writer.applyStatus<T>(obj));
  }

  override async create<T extends KubeObject>(obj: KubeObject) {
    this.check();
    return this.written(await this.writer.create<T>(obj));
  }

  override async replace<T extends KubeObject>(obj: KubeObject) {
    this.check();
    return this.written(await this.writer.replace<T>(obj));
  }

  override async delete(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    opts?: DeleteOptions,
  ) {
    this.check();
    return this.writer.delete(apiVersion, kind, namespace, name, opts);
  }
}
