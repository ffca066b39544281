import { isNotFound } from "./errors.ts";
import type { KubeTransport } from "./rest.ts";
import type { KubeObject, ResourceType } from "./types.ts";

/** The operator's one field manager: every server-side apply uses it. */
export const FIELD_MANAGER = "cronscale";

/** Deletion options. */
export interface DeleteOptions {
  propagationPolicy?: "Background" | "Foreground" | "Orphan";
}

/** Apply options; `force` (default true) takes over fields another manager owns. */
export interface ApplyOptions {
  force?: boolean;
}

/** The API access reconcilers use; a real and an in-memory implementation exist. */
export interface KubeClient {
  /** Reads one object; undefined when it does not exist. */
  get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): Promise<T | undefined>;
  /** Lists objects of a kind (all namespaces when `namespace` is empty), optionally by label selector. */
  list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    labelSelector?: string,
  ): Promise<T[]>;
  /** Server-side apply with field manager "cronscale" (force by default); returns the live object. */
  apply<T extends KubeObject = KubeObject>(obj: KubeObject, opts?: ApplyOptions): Promise<T>;
  /**
   * Server-side apply of `obj.status` through the status subresource; `metadata.resourceVersion`,
   * when set, is a precondition (409 on mismatch).
   */
  applyStatus<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
  /** Creates an object (409 if it exists). */
  create<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
  /** Replaces an object; `metadata.resourceVersion` is a precondition (409 on mismatch). */
  replace<T extends KubeObject = KubeObject>(obj: KubeObject): Promise<T>;
  /** Deletes an object; resolves false when it was already gone. */
  delete(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    opts?: DeleteOptions,
  ): Promise<boolean>;
  /**
   * GET of an API path that is not an object of a kind (aggregated APIs, e.g. the custom
   * metrics API's MetricValueList of a namespace's pods); undefined on 404.
   */
  getRaw<T = unknown>(path: string, query?: Record<string, string>): Promise<T | undefined>;
  /**
   * This client with `check` called again right before each write request is sent (after every
   * await of the transport); `check` throws to refuse. Reads, discovery and this client itself
   * are unaffected. Optional: a client without a transport (the in-memory fake) has no gap
   * between the caller's check and the write.
   */
  withWriteFence?(check: () => void): KubeClient;
}

/** Removes fields an apply request must not carry (server-owned bookkeeping). */
export function applyBody(obj: KubeObject): KubeObject {
  const { managedFields: _m, creationTimestamp: _c, resourceVersion: _r, uid: _u, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

function typeOf(obj: { apiVersion: string; kind: string }): ResourceType {
  return { apiVersion: obj.apiVersion, kind: obj.kind };
}

/** KubeClient over the real API server. */
export class RealKubeClient implements KubeClient {
  private readonly t: KubeTransport;
  private readonly fence: (() => void) | undefined;

  constructor(transport: KubeTransport, fence?: () => void) {
    this.t = transport;
    this.fence = fence;
  }

  withWriteFence(check: () => void): RealKubeClient {
    return new RealKubeClient(this.t, check);
  }

  /** The underlying transport (for informers and raw requests). */
  get transport(): KubeTransport {
    return this.t;
  }

  async get<T extends KubeObject>(apiVersion: string, kind: string, namespace: string, name: string) {
    try {
      const path = await this.t.path({ apiVersion, kind }, namespace, name);
      return await this.t.request<T>("GET", path);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    labelSelector?: string,
  ) {
    const path = await this.t.path({ apiVersion, kind }, namespace);
    const items: T[] = [];
    let cont: string | undefined;
    // Paginate so one huge collection never becomes one huge response.
    do {
      const page = await this.t.request<{ items: T[]; metadata?: { continue?: string } }>("GET", path, {
        query: { labelSelector: labelSelector || undefined, limit: 500, continue: cont },
      });
      for (const it of page.items) items.push({ ...it, apiVersion, kind });
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return items;
  }

  async apply<T extends KubeObject>(obj: KubeObject, opts: ApplyOptions = {}) {
    const path = await this.t.path(typeOf(obj), obj.metadata.namespace, obj.metadata.name);
    return this.t.request<T>("PATCH", path, {
      query: { fieldManager: FIELD_MANAGER, force: opts.force ?? true },
      body: applyBody(obj),
      contentType: "application/apply-patch+yaml",
      fence: this.fence,
    });
  }

  async applyStatus<T extends KubeObject>(obj: KubeObject) {
    const path = await this.t.path(typeOf(obj), obj.metadata.namespace, obj.metadata.name, "status");
    const body = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: {
        name: obj.metadata.name,
        namespace: obj.metadata.namespace,
        // A precondition when given: the API server answers 409 if the object changed since.
        ...(obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      },
      status: obj.status,
    };
    return this.t.request<T>("PATCH", path, {
      query: { fieldManager: FIELD_MANAGER, force: true },
      body,
      contentType: "application/apply-patch+yaml",
      fence: this.fence,
    });
  }

  async create<T extends KubeObject>(obj: KubeObject) {
    const path = await this.t.path(typeOf(obj), obj.metadata.namespace);
    return this.t.request<T>("POST", path, {
      query: { fieldManager: FIELD_MANAGER },
      body: obj,
      fence: this.fence,
    });
  }

  async replace<T extends KubeObject>(obj: KubeObject) {
    const path = await this.t.path(typeOf(obj), obj.metadata.namespace, obj.metadata.name);
    return this.t.request<T>("PUT", path, {
      query: { fieldManager: FIELD_MANAGER },
      body: obj,
      fence: this.fence,
    });
  }

  async getRaw<T>(path: string, query?: Record<string, string>) {
    try {
      return await this.t.request<T>("GET", path, { query });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(apiVersion: string, kind: string, namespace: string, name: string, opts: DeleteOptions = {}) {
    try {
      const path = await this.t.path({ apiVersion, kind }, namespace, name);
      await this.t.request("DELETE", path, {
        query: { propagationPolicy: opts.propagationPolicy },
        fence: this.fence,
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
