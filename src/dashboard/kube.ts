import { request as httpRequest } from "node:http";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { LABEL_TASK } from "../api/v1alpha1/labels.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformBackup } from "../api/v1alpha1/scaleplatformbackup.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { ApiError } from "../runtime/errors.ts";
import { KubeTransport } from "../runtime/rest.ts";
import type { KubeObject } from "../runtime/types.ts";
import { retryingTransport } from "./retry-after.ts";

// The dashboard talks to the API server only as the viewer: every request below carries the
// viewer's bearer token, so the API server's authentication, RBAC and the CRDs' validation apply
// exactly as they do to `kubectl`. The dashboard's own identity is never used for a user's action.

/** Who the API server says the token belongs to. */
export interface UserInfo {
  username: string;
  groups: string[];
}

/** Summed usage of some pods, as the metrics API reports it. */
export interface PodUsage {
  pods: number;
  cpuMillis: number;
  memoryMiB: number;
}

const UNITS: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
};

/** A Kubernetes quantity ("250m", "12345678n", "512Mi") as a number; NaN when unreadable. */
export function quantity(q: string): number {
  const m = /^([0-9.]+)(n|u|m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q.trim());
  return m ? Number(m[1]) * (UNITS[m[2] ?? ""] ?? Number.NaN) : Number.NaN;
}

/** One question for SelfSubjectAccessReview. */
export interface AccessCheck {
  verb: string;
  resource: string;
  group: string;
  namespace: string;
  subresource?: string;
}

/** What the dashboard asks of the API server on behalf of one viewer. */
export interface ViewerApi {
  whoAmI(): Promise<UserInfo>;
  can(check: AccessCheck): Promise<boolean>;
  listNamespaces(): Promise<string[]>;
  listTasks(namespace: string): Promise<ScheduledTask[]>;
  getTask(namespace: string, name: string): Promise<ScheduledTask>;
  createTask(task: KubeObject, dryRun: boolean): Promise<ScheduledTask>;
  replaceTask(task: KubeObject, dryRun: boolean): Promise<ScheduledTask>;
  patchTask(namespace: string, name: string, patch: unknown): Promise<ScheduledTask>;
  deleteTask(namespace: string, name: string): Promise<void>;
  listExecutions(namespace: string, task: string): Promise<TaskExecution[]>;
  /** Creates an execution record (a renamed task's history moved to it). */
  createExecution(record: KubeObject): Promise<TaskExecution>;
  getSecret(namespace: string, name: string): Promise<KubeObject & { data?: Record<string, string> }>;
  createSecret(secret: KubeObject): Promise<KubeObject>;
  patchSecret(namespace: string, name: string, patch: unknown): Promise<KubeObject>;
  deleteSecret(namespace: string, name: string): Promise<void>;
  /** Names of the task's pods that have not finished (Pending or Running). */
  listActivePods(namespace: string, task: string): Promise<string[]>;
  /** Follows a task pod's script output until it ends or `signal` aborts. */
  followLog(
    namespace: string,
    pod: string,
    onText: (text: string) => void,
    signal: AbortSignal,
  ): Promise<void>;
  listPlatforms(namespace: string): Promise<ScalePlatform[]>;
  getPlatform(namespace: string, name: string): Promise<ScalePlatform>;
  createPlatform(platform: KubeObject, dryRun: boolean): Promise<ScalePlatform>;
  patchPlatform(namespace: string, name: string, patch: unknown): Promise<ScalePlatform>;
  /**
   * Server-side apply of `config` (a partial ScalePlatform) under field manager `manager`:
   * `force` false refuses (409) fields another manager set to a different value.
   */
  applyPlatform(
    config: KubeObject,
    opts: { manager: string; dryRun: boolean; force: boolean },
  ): Promise<ScalePlatform>;
  /** A JSON patch (RFC 6902) as the viewer, recorded under field manager `manager`. */
  jsonPatchPlatform(namespace: string, name: string, ops: unknown[], manager: string): Promise<ScalePlatform>;
  /** Follows one platform: `onChange` gets each new version until `signal` aborts or the watch ends. */
  watchPlatform(
    namespace: string,
    name: string,
    onChange: (p: ScalePlatform) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /**
   * CPU (millicores) and memory (MiB) in use by the pods matching `selector`, from the metrics
   * API (metrics.k8s.io) as the viewer; undefined when the cluster does not serve it.
   */
  podUsage(namespace: string, selector: string): Promise<PodUsage | undefined>;
  /**
   * The Prometheus text of each ready pod matching `selector`, read on its `http` container port
   * through the API server's pod proxy as the viewer (RBAC: `list pods`, `get pods/proxy`). A pod
   * that does not answer is left out. Read at the pod's `prometheus.io/path` annotation (the
   * operator's configured path), or at `path` on a pod without it.
   */
  podMetricsTexts(namespace: string, selector: string, path: string): Promise<Map<string, string>>;
  listPlatformBackups(namespace: string): Promise<ScalePlatformBackup[]>;
  createPlatformBackup(backup: KubeObject): Promise<ScalePlatformBackup>;
  deletePlatformBackup(namespace: string, name: string): Promise<void>;
  /** Calls `onChange` on every change of the namespace's ScalePlatformBackups until `signal` aborts or the watch ends. */
  watchPlatformBackups(namespace: string, onChange: () => void, signal: AbortSignal): Promise<void>;
  listPlatformRestores(namespace: string): Promise<ScalePlatformRestore[]>;
  createPlatformRestore(restore: KubeObject, dryRun: boolean): Promise<ScalePlatformRestore>;
  patchPlatformRestore(namespace: string, name: string, patch: unknown): Promise<ScalePlatformRestore>;
  /** Calls `onChange` on every change of the namespace's ScalePlatformRestores until `signal` aborts or the watch ends. */
  watchPlatformRestores(namespace: string, onChange: () => void, signal: AbortSignal): Promise<void>;
}

const TASKS = `/apis/${API_VERSION}`;
const ns = (n: string) => encodeURIComponent(n);

/** The cluster the dashboard itself reaches (server, CA), authenticated with `token` instead. */
export function viewerKubeConfig(base: KubeConfig, token: string): KubeConfig {
  const cluster = base.getCurrentCluster();
  if (!cluster) throw new Error("the dashboard's kubeconfig names no current cluster");
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: "viewer", token }],
    contexts: [{ name: "viewer", cluster: cluster.name, user: "viewer" }],
    currentContext: "viewer",
  });
  return kc;
}

/**
 * ViewerApi over HTTP with the viewer's token, or with a kubeconfig made for the viewer (the
 * dashboard's credentials impersonating a proxy-authenticated viewer, auth-proxy-kube.ts).
 */
export class KubeViewerApi implements ViewerApi {
  private readonly t: KubeTransport;
  private readonly kc: KubeConfig;
  constructor(base: KubeConfig, viewer: string | KubeConfig) {
    this.kc = typeof viewer === "string" ? viewerKubeConfig(base, viewer) : viewer;
    this.t = retryingTransport(KubeTransport.create(this.kc));
  }

  async whoAmI(): Promise<UserInfo> {
    // SelfSubjectReview: the API server authenticates the token and echoes the identity; it needs
    // no permission, and a bad token is a 401.
    const r = await this.t.request<{ status?: { userInfo?: { username?: string; groups?: string[] } } }>(
      "POST",
      "/apis/authentication.k8s.io/v1/selfsubjectreviews",
      { body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" } },
    );
    const u = r.status?.userInfo;
    if (!u?.username) throw new ApiError(401, "Unauthorized", "the token names no user");
    return { username: u.username, groups: u.groups ?? [] };
  }

  async can(c: AccessCheck): Promise<boolean> {
    const r = await this.t.request<{ status?: { allowed?: boolean } }>(
      "POST",
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      {
        body: {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: { resourceAttributes: c },
        },
      },
    );
    return r.status?.allowed === true;
  }

  async listNamespaces(): Promise<string[]> {
    const r = await this.t.request<{ items: KubeObject[] }>("GET", "/api/v1/namespaces");
    return r.items.map((i) => i.metadata.name ?? "").filter(Boolean);
  }

  async listTasks(namespace: string): Promise<ScheduledTask[]> {
    const r = await this.t.request<{ items: ScheduledTask[] }>(
      "GET",
      `${TASKS}/namespaces/${ns(namespace)}/scheduledtasks`,
    );
    return r.items;
  }

  getTask(namespace: string, name: string): Promise<ScheduledTask> {
    return this.t.request("GET", `${TASKS}/namespaces/${ns(namespace)}/scheduledtasks/${ns(name)}`);
  }

  createTask(task: KubeObject, dryRun: boolean): Promise<ScheduledTask> {
    return this.t.request("POST", `${TASKS}/namespaces/${ns(task.metadata.namespace ?? "")}/scheduledtasks`, {
      body: task,
      query: { dryRun: dryRun ? "All" : undefined, fieldValidation: "Strict" },
    });
  }

  replaceTask(task: KubeObject, dryRun: boolean): Promise<ScheduledTask> {
    const { namespace = "", name = "" } = task.metadata;
    return this.t.request("PUT", `${TASKS}/namespaces/${ns(namespace)}/scheduledtasks/${ns(name)}`, {
      body: task,
      query: { dryRun: dryRun ? "All" : undefined, fieldValidation: "Strict" },
    });
  }

  patchTask(namespace: string, name: string, patch: unknown): Promise<ScheduledTask> {
    return this.t.request("PATCH", `${TASKS}/namespaces/${ns(namespace)}/scheduledtasks/${ns(name)}`, {
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  async deleteTask(namespace: string, name: string): Promise<void> {
    await this.t.request("DELETE", `${TASKS}/namespaces/${ns(namespace)}/scheduledtasks/${ns(name)}`, {
      body: { propagationPolicy: "Background" },
    });
  }

  async listExecutions(namespace: string, task: string): Promise<TaskExecution[]> {
    const r = await this.t.request<{ items: TaskExecution[] }>(
      "GET",
      `${TASKS}/namespaces/${ns(namespace)}/taskexecutions`,
      { query: { labelSelector: `${LABEL_TASK}=${task}` } },
    );
    return r.items;
  }

  createExecution(record: KubeObject): Promise<TaskExecution> {
    const path = `${TASKS}/namespaces/${ns(record.metadata.namespace ?? "")}/taskexecutions`;
    return this.t.request("POST", path, { body: record, query: { fieldValidation: "Strict" } });
  }

  getSecret(namespace: string, name: string): Promise<KubeObject & { data?: Record<string, string> }> {
    return this.t.request("GET", `/api/v1/namespaces/${ns(namespace)}/secrets/${ns(name)}`);
  }

  createSecret(secret: KubeObject): Promise<KubeObject> {
    return this.t.request("POST", `/api/v1/namespaces/${ns(secret.metadata.namespace ?? "")}/secrets`, {
      body: secret,
    });
  }

  patchSecret(namespace: string, name: string, patch: unknown): Promise<KubeObject> {
    return this.t.request("PATCH", `/api/v1/namespaces/${ns(namespace)}/secrets/${ns(name)}`, {
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    await this.t.request("DELETE", `/api/v1/namespaces/${ns(namespace)}/secrets/${ns(name)}`);
  }

  async listActivePods(namespace: string, task: string): Promise<string[]> {
    const r = await this.t.request<{ items: (KubeObject & { status?: { phase?: string } })[] }>(
      "GET",
      `/api/v1/namespaces/${ns(namespace)}/pods`,
      { query: { labelSelector: `${LABEL_TASK}=${task}` } },
    );
    return r.items
      .filter((p) => p.status?.phase === "Running" || p.status?.phase === "Pending")
      .map((p) => p.metadata.name ?? "");
  }

  async followLog(
    namespace: string,
    pod: string,
    onText: (text: string) => void,
    signal: AbortSignal,
  ): Promise<void> {
    // `pods/<pod>/log?follow=true` as the viewer (RBAC pods/log), streamed over node:https with
    // the kubeconfig's TLS and token (client-node's Log cannot report the end of the stream).
    const server = this.kc.getCurrentCluster()?.server ?? "";
    const url = new URL(`${server}/api/v1/namespaces/${ns(namespace)}/pods/${ns(pod)}/log`);
    url.searchParams.set("container", "script");
    url.searchParams.set("follow", "true");
    const opts: RequestOptions = { method: "GET", signal };
    await this.kc.applyToHTTPSOptions(opts);
    await new Promise<void>((resolve, reject) => {
      const req = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, opts, (res) => {
        res.setEncoding("utf8");
        if (res.statusCode !== 200) {
          let body = "";
          res.on("data", (c: string) => {
            body += c;
          });
          res.on("end", () =>
            reject(new ApiError(res.statusCode ?? 500, "LogUnavailable", body.slice(0, 300))),
          );
          return;
        }
        res.on("data", (c: string) => onText(c));
        res.on("end", () => resolve());
        res.on("error", () => resolve());
      });
      req.on("error", (err) => (signal.aborted ? resolve() : reject(err)));
      req.end();
    });
  }

  async listPlatforms(namespace: string): Promise<ScalePlatform[]> {
    const r = await this.t.request<{ items: ScalePlatform[] }>(
      "GET",
      `${TASKS}/namespaces/${ns(namespace)}/scaleplatforms`,
    );
    return r.items;
  }

  getPlatform(namespace: string, name: string): Promise<ScalePlatform> {
    return this.t.request("GET", `${TASKS}/namespaces/${ns(namespace)}/scaleplatforms/${ns(name)}`);
  }

  createPlatform(platform: KubeObject, dryRun: boolean): Promise<ScalePlatform> {
    const path = `${TASKS}/namespaces/${ns(platform.metadata.namespace ?? "")}/scaleplatforms`;
    return this.t.request("POST", path, {
      body: platform,
      query: { dryRun: dryRun ? "All" : undefined, fieldValidation: "Strict" },
    });
  }

  patchPlatform(namespace: string, name: string, patch: unknown): Promise<ScalePlatform> {
    return this.t.request("PATCH", `${TASKS}/namespaces/${ns(namespace)}/scaleplatforms/${ns(name)}`, {
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  applyPlatform(
    config: KubeObject,
    opts: { manager: string; dryRun: boolean; force: boolean },
  ): Promise<ScalePlatform> {
    const { namespace = "", name = "" } = config.metadata;
    return this.t.request("PATCH", `${TASKS}/namespaces/${ns(namespace)}/scaleplatforms/${ns(name)}`, {
      body: config,
      // JSON is YAML: the apply body is sent as JSON under the apply content type.
      contentType: "application/apply-patch+yaml",
      query: {
        fieldManager: opts.manager,
        force: opts.force,
        dryRun: opts.dryRun ? "All" : undefined,
        fieldValidation: "Strict",
      },
    });
  }

  jsonPatchPlatform(
    namespace: string,
    name: string,
    ops: unknown[],
    manager: string,
  ): Promise<ScalePlatform> {
    return this.t.request("PATCH", `${TASKS}/namespaces/${ns(namespace)}/scaleplatforms/${ns(name)}`, {
      body: ops,
      contentType: "application/json-patch+json",
      query: { fieldManager: manager },
    });
  }

  watchPlatform(
    namespace: string,
    name: string,
    onChange: (p: ScalePlatform) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return this.watchAs(
      `${TASKS}/namespaces/${ns(namespace)}/scaleplatforms`,
      { fieldSelector: `metadata.name=${name}` },
      (type, obj) => {
        if (type === "ADDED" || type === "MODIFIED") onChange(obj as ScalePlatform);
      },
      signal,
    );
  }

  async podUsage(namespace: string, selector: string): Promise<PodUsage | undefined> {
    type PodMetrics = { containers?: { usage?: { cpu?: string; memory?: string } }[] };
    let r: { items: PodMetrics[] };
    try {
      r = await this.t.request("GET", `/apis/metrics.k8s.io/v1beta1/namespaces/${ns(namespace)}/pods`, {
        query: { labelSelector: selector },
      });
    } catch (err) {
      // Not served (no metrics-server): 404, or 503 while its APIService is unavailable.
      if (err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 503)) return undefined;
      throw err;
    }
    const usage = { pods: r.items.length, cpuMillis: 0, memoryMiB: 0 };
    for (const c of r.items.flatMap((p) => p.containers ?? [])) {
      usage.cpuMillis += (quantity(c.usage?.cpu ?? "0") || 0) * 1000;
      usage.memoryMiB += (quantity(c.usage?.memory ?? "0") || 0) / 1024 ** 2;
    }
    return usage;
  }

  async podMetricsTexts(namespace: string, selector: string, path: string): Promise<Map<string, string>> {
    type Pod = KubeObject & {
      spec?: { containers?: { ports?: { name?: string; containerPort?: number }[] }[] };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const r = await this.t.request<{ items: Pod[] }>("GET", `/api/v1/namespaces/${ns(namespace)}/pods`, {
      query: { labelSelector: selector },
    });
    const out = new Map<string, string>();
    await Promise.all(
      r.items
        .filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
        .map(async (p) => {
          const name = p.metadata.name ?? "";
          // The pod proxy takes a port number (a name is not resolved for pods).
          const port = p.spec?.containers
            ?.flatMap((c) => c.ports ?? [])
            .find((x) => x.name === "http")?.containerPort;
          if (!port) return;
          // The path the operator announces on the pod (its configured metricsPath), else `path`.
          const at = p.metadata.annotations?.["prometheus.io/path"] ?? path;
          try {
            const text = await this.t.request<unknown>(
              "GET",
              `/api/v1/namespaces/${ns(namespace)}/pods/${ns(name)}:${port}/proxy${at}`,
              { accept: "text/plain", timeoutMs: 5000 },
            );
            if (typeof text === "string") out.set(name, text);
          } catch (err) {
            // Refused by RBAC: the viewer may read no pod's metrics. Otherwise the pod is left out.
            if (err instanceof ApiError && err.statusCode === 403) throw err;
          }
        }),
    );
    return out;
  }

  async listPlatformBackups(namespace: string): Promise<ScalePlatformBackup[]> {
    const r = await this.t.request<{ items: ScalePlatformBackup[] }>(
      "GET",
      `${TASKS}/namespaces/${ns(namespace)}/scaleplatformbackups`,
    );
    return r.items;
  }

  createPlatformBackup(backup: KubeObject): Promise<ScalePlatformBackup> {
    const path = `${TASKS}/namespaces/${ns(backup.metadata.namespace ?? "")}/scaleplatformbackups`;
    return this.t.request("POST", path, { body: backup, query: { fieldValidation: "Strict" } });
  }

  async deletePlatformBackup(namespace: string, name: string): Promise<void> {
    await this.t.request("DELETE", `${TASKS}/namespaces/${ns(namespace)}/scaleplatformbackups/${ns(name)}`, {
      body: { propagationPolicy: "Background" },
    });
  }

  watchPlatformBackups(namespace: string, onChange: () => void, signal: AbortSignal): Promise<void> {
    return this.watchAs(
      `${TASKS}/namespaces/${ns(namespace)}/scaleplatformbackups`,
      {},
      () => onChange(),
      signal,
    );
  }

  async listPlatformRestores(namespace: string): Promise<ScalePlatformRestore[]> {
    const r = await this.t.request<{ items: ScalePlatformRestore[] }>(
      "GET",
      `${TASKS}/namespaces/${ns(namespace)}/scaleplatformrestores`,
    );
    return r.items;
  }

  createPlatformRestore(restore: KubeObject, dryRun: boolean): Promise<ScalePlatformRestore> {
    const path = `${TASKS}/namespaces/${ns(restore.metadata.namespace ?? "")}/scaleplatformrestores`;
    return this.t.request("POST", path, {
      body: restore,
      query: { dryRun: dryRun ? "All" : undefined, fieldValidation: "Strict" },
    });
  }

  patchPlatformRestore(namespace: string, name: string, patch: unknown): Promise<ScalePlatformRestore> {
    const path = `${TASKS}/namespaces/${ns(namespace)}/scaleplatformrestores/${ns(name)}`;
    return this.t.request("PATCH", path, {
      body: patch,
      contentType: "application/merge-patch+json",
      query: { fieldValidation: "Strict" },
    });
  }

  watchPlatformRestores(namespace: string, onChange: () => void, signal: AbortSignal): Promise<void> {
    return this.watchAs(
      `${TASKS}/namespaces/${ns(namespace)}/scaleplatformrestores`,
      {},
      () => onChange(),
      signal,
    );
  }

  /**
   * A watch as the viewer (RBAC `watch`), so live pages need no cache with the dashboard's own
   * rights. It ends on abort (the browser left) or by the server.
   */
  private watchAs(
    path: string,
    query: Record<string, string>,
    onEvent: (type: string, obj: unknown) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise<void>((resolve) => {
      this.t
        .watch(path, { ...query, allowWatchBookmarks: false }, onEvent, () => resolve())
        .then(
          (ctl) => {
            if (signal.aborted) ctl.abort();
            else signal.addEventListener("abort", () => ctl.abort(), { once: true });
          },
          () => resolve(),
        );
    });
  }
}
