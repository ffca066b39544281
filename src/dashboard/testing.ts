import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformBackup } from "../api/v1alpha1/scaleplatformbackup.ts";
import type { ScalePlatformRestore } from "../api/v1alpha1/scaleplatformrestore.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { ApiError } from "../runtime/errors.ts";
import type { KubeObject } from "../runtime/types.ts";
import type { AccessCheck, PodUsage, UserInfo, ViewerApi } from "./kube.ts";

// An in-memory ViewerApi for the dashboard's unit tests: objects in maps, permissions as a set of
// "verb resource namespace" strings, a 403 for everything else (as the API server would answer).
// The real client is exercised against the real API server by test/integration/dashboard.

type Obj = KubeObject & { data?: Record<string, string> };

/** A fake viewer: `allow` lists what it may do ("list scheduledtasks default", "* * *" for all). */
export class FakeViewerApi implements ViewerApi {
  readonly tasks = new Map<string, ScheduledTask>();
  readonly executions: TaskExecution[] = [];
  readonly secrets = new Map<string, Obj>();
  readonly calls: string[] = [];
  platforms = new Map<string, ScalePlatform>();
  readonly backups = new Map<string, ScalePlatformBackup>();
  private backupSeq = 0;
  readonly restores = new Map<string, ScalePlatformRestore>();
  /** Causes the next non-dry-run or dry-run restore create is refused with (a 422, as CEL would). */
  refuseRestore: { field: string; message: string } | undefined;
  private readonly watchers = new Set<(p: ScalePlatform) => void>();
  readonly user: UserInfo | undefined;
  readonly allow: Set<string>;
  readonly namespaces: string[];
  constructor(user: UserInfo | undefined, allow: Set<string>, namespaces: string[] = ["default"]) {
    this.user = user;
    this.allow = allow;
    this.namespaces = namespaces;
  }

  private check(verb: string, resource: string, namespace: string): void {
    if (!this.permits(verb, resource, namespace))
      throw new ApiError(403, "Forbidden", `${resource} is forbidden: User cannot ${verb} in ${namespace}`, {
        message: `${resource} is forbidden: User "${this.user?.username}" cannot ${verb} resource "${resource}" in namespace "${namespace}"`,
      });
  }
  private permits(verb: string, resource: string, namespace: string): boolean {
    return (
      this.allow.has("* * *") ||
      this.allow.has(`${verb} ${resource} ${namespace}`) ||
      this.allow.has(`${verb} ${resource} *`)
    );
  }

  async whoAmI(): Promise<UserInfo> {
    if (!this.user) throw new ApiError(401, "Unauthorized", "Unauthorized");
    return this.user;
  }
  async can(c: AccessCheck): Promise<boolean> {
    return this.permits(c.verb, c.subresource ? `${c.resource}/${c.subresource}` : c.resource, c.namespace);
  }
  async listNamespaces(): Promise<string[]> {
    this.check("list", "namespaces", "");
    return this.namespaces;
  }
  async listTasks(namespace: string): Promise<ScheduledTask[]> {
    this.check("list", "scheduledtasks", namespace);
    return [...this.tasks.values()].filter((t) => t.metadata.namespace === namespace);
  }
  async getTask(namespace: string, name: string): Promise<ScheduledTask> {
    this.check("get", "scheduledtasks", namespace);
    const t = this.tasks.get(`${namespace}/${name}`);
    if (!t) throw new ApiError(404, "NotFound", `scheduledtasks "${name}" not found`);
    return t;
  }
  async createTask(task: KubeObject, dryRun: boolean): Promise<ScheduledTask> {
    const ns = task.metadata.namespace ?? "";
    this.check("create", "scheduledtasks", ns);
    const spec = task.spec as Record<string, unknown>;
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(task.metadata.name ?? ""))
      throw new ApiError(422, "Invalid", "invalid", {
        message: "ScheduledTask is invalid",
        details: {
          causes: [{ field: "metadata.name", message: "metadata.name may contain only lowercase letters" }],
        },
      });
    if (typeof spec.schedule === "string" && spec.schedule.split(" ").length !== 5)
      throw new ApiError(422, "Invalid", "invalid", {
        message: "ScheduledTask is invalid",
        details: {
          causes: [{ field: "spec.schedule", message: "spec.schedule must have exactly five fields" }],
        },
      });
    this.calls.push(`create${dryRun ? " dry-run" : ""} ${ns}/${task.metadata.name}`);
    const created = {
      ...task,
      metadata: { ...task.metadata, uid: `uid-${task.metadata.name}` },
    } as ScheduledTask;
    if (!dryRun) this.tasks.set(`${ns}/${task.metadata.name}`, created);
    return created;
  }
  async replaceTask(task: KubeObject, dryRun: boolean): Promise<ScheduledTask> {
    const ns = task.metadata.namespace ?? "";
    this.check("update", "scheduledtasks", ns);
    this.calls.push(`replace${dryRun ? " dry-run" : ""} ${ns}/${task.metadata.name}`);
    if (!dryRun) this.tasks.set(`${ns}/${task.metadata.name}`, task as ScheduledTask);
    return task as ScheduledTask;
  }
  async patchTask(namespace: string, name: string, patch: unknown): Promise<ScheduledTask> {
    this.check("patch", "scheduledtasks", namespace);
    const t = await this.getTask(namespace, name);
    const p = patch as { spec?: object; metadata?: { annotations?: Record<string, string> } };
    // The operator's answer to a suspension (phase Stopped), as the task controller writes it.
    const suspended = (p.spec as { suspend?: boolean } | undefined)?.suspend === true;
    const next = {
      ...t,
      ...(suspended ? { status: { ...t.status, phase: "Stopped" as const } } : {}),
      spec: { ...t.spec, ...p.spec },
      metadata: { ...t.metadata, annotations: { ...t.metadata.annotations, ...p.metadata?.annotations } },
    };
    this.tasks.set(`${namespace}/${name}`, next);
    this.calls.push(`patch ${namespace}/${name} ${JSON.stringify(patch)}`);
    return next;
  }
  async deleteTask(namespace: string, name: string): Promise<void> {
    this.check("delete", "scheduledtasks", namespace);
    this.tasks.delete(`${namespace}/${name}`);
    // Garbage collection: the task's records go with it.
    for (let i = this.executions.length - 1; i >= 0; i--) {
      const x = this.executions[i];
      if (x?.metadata.namespace === namespace && x.spec.taskName === name) this.executions.splice(i, 1);
    }
    this.calls.push(`delete ${namespace}/${name}`);
  }
  async listExecutions(namespace: string, task: string): Promise<TaskExecution[]> {
    this.check("list", "taskexecutions", namespace);
    return this.executions.filter((x) => x.metadata.namespace === namespace && x.spec.taskName === task);
  }
  async createExecution(record: KubeObject): Promise<TaskExecution> {
    const ns = record.metadata.namespace ?? "";
    this.check("create", "taskexecutions", ns);
    if (this.executions.some((x) => x.metadata.namespace === ns && x.metadata.name === record.metadata.name))
      throw new ApiError(409, "AlreadyExists", `taskexecutions "${record.metadata.name}" already exists`);
    this.executions.push(record as TaskExecution);
    this.calls.push(`create execution ${ns}/${record.metadata.name}`);
    return record as TaskExecution;
  }
  async getSecret(namespace: string, name: string): Promise<Obj> {
    this.check("get", "secrets", namespace);
    const s = this.secrets.get(`${namespace}/${name}`);
    if (!s) throw new ApiError(404, "NotFound", `secrets "${name}" not found`);
    return s;
  }
  async createSecret(secret: KubeObject): Promise<KubeObject> {
    const ns = secret.metadata.namespace ?? "";
    this.check("create", "secrets", ns);
    this.secrets.set(`${ns}/${secret.metadata.name}`, secret as Obj);
    this.calls.push(`create secret ${ns}/${secret.metadata.name}`);
    return secret;
  }
  async patchSecret(namespace: string, name: string, patch: unknown): Promise<KubeObject> {
    this.check("patch", "secrets", namespace);
    const s = this.secrets.get(`${namespace}/${name}`);
    if (!s) throw new ApiError(404, "NotFound", `secrets "${name}" not found`);
    const p = patch as { data?: Record<string, string | null>; metadata?: object };
    const data = { ...s.data };
    for (const [k, v] of Object.entries(p.data ?? {}))
      if (v === null) delete data[k];
      else data[k] = v;
    const next = { ...s, data, metadata: { ...s.metadata, ...p.metadata } };
    this.secrets.set(`${namespace}/${name}`, next);
    this.calls.push(`patch secret ${namespace}/${name}`);
    return next;
  }
  async deleteSecret(namespace: string, name: string): Promise<void> {
    this.check("delete", "secrets", namespace);
    this.secrets.delete(`${namespace}/${name}`);
  }
  /** Active pods by task, and the log text each one "prints". */
  readonly pods = new Map<string, { task: string; namespace: string; log: string[] }>();
  async listActivePods(namespace: string, task: string): Promise<string[]> {
    this.check("list", "pods", namespace);
    return [...this.pods].filter(([, p]) => p.namespace === namespace && p.task === task).map(([n]) => n);
  }
  async followLog(
    namespace: string,
    pod: string,
    onText: (t: string) => void,
    _signal: AbortSignal,
  ): Promise<void> {
    this.check("get", "pods/log", namespace);
    for (const line of this.pods.get(pod)?.log ?? []) onText(line);
  }
  async listPlatforms(namespace: string): Promise<ScalePlatform[]> {
    this.check("list", "scaleplatforms", namespace);
    return [...this.platforms.values()].filter((p) => p.metadata.namespace === namespace);
  }
  async getPlatform(namespace: string, name: string): Promise<ScalePlatform> {
    this.check("get", "scaleplatforms", namespace);
    const p = this.platforms.get(`${namespace}/${name}`);
    if (!p) throw new ApiError(404, "NotFound", `scaleplatforms "${name}" not found`);
    return p;
  }
  async createPlatform(platform: KubeObject, dryRun: boolean): Promise<ScalePlatform> {
    const ns = platform.metadata.namespace ?? "";
    this.check("create", "scaleplatforms", ns);
    const host = (platform.spec as { domains?: { platform?: string } }).domains?.platform ?? "";
    if (!/^[a-z0-9.-]+$/.test(host))
      throw new ApiError(422, "Invalid", "invalid", {
        message: "ScalePlatform is invalid",
        details: {
          causes: [{ field: "spec.domains.platform", message: "spec.domains.platform must be a host name" }],
        },
      });
    this.calls.push(`create platform${dryRun ? " dry-run" : ""} ${ns}/${platform.metadata.name}`);
    if (!dryRun) this.setPlatform(platform as ScalePlatform);
    return platform as ScalePlatform;
  }
  async patchPlatform(namespace: string, name: string, patch: unknown): Promise<ScalePlatform> {
    this.check("patch", "scaleplatforms", namespace);
    const p = await this.getPlatform(namespace, name);
    const next = { ...p, spec: { ...p.spec, ...(patch as { spec?: object }).spec } } as ScalePlatform;
    const rank = ["Standard", "Professional", "Enterprise", "Custom"];
    if (rank.indexOf(next.spec.plan) < rank.indexOf(p.spec.plan))
      throw new ApiError(422, "Invalid", "invalid", {
        message: `cannot change plan from ${p.spec.plan} to ${next.spec.plan}`,
      });
    this.setPlatform(next);
    this.calls.push(`patch platform ${namespace}/${name} ${JSON.stringify(patch)}`);
    return next;
  }
  /** A field another manager owns: a non-forced apply touching its group is refused with a 409. */
  applyConflict: { field: string; manager: string } | undefined;
  async applyPlatform(
    config: KubeObject,
    opts: { manager: string; dryRun: boolean; force: boolean },
  ): Promise<ScalePlatform> {
    const { namespace = "", name = "" } = config.metadata;
    this.check("patch", "scaleplatforms", namespace);
    const p = await this.getPlatform(namespace, name);
    const spec = config.spec as Record<string, Record<string, unknown> | undefined>;
    const email = spec.store?.contactEmail;
    if (typeof email === "string" && !email.includes("@"))
      throw new ApiError(422, "Invalid", "invalid", {
        message: "ScalePlatform is invalid",
        details: {
          causes: [
            {
              field: "spec.store.contactEmail",
              message: `Invalid value: "${email}": must be an email address`,
            },
          ],
        },
      });
    const c = this.applyConflict;
    if (c && !opts.force && spec[c.field.split(".")[2] ?? ""])
      throw new ApiError(409, "Conflict", "Apply failed with 1 conflict", {
        message: `Apply failed with 1 conflict: conflict with "${c.manager}": ${c.field}`,
        details: {
          causes: [
            { reason: "FieldManagerConflict", field: c.field, message: `conflict with "${c.manager}"` },
          ],
        },
      });
    this.calls.push(
      `apply platform${opts.dryRun ? " dry-run" : ""}${opts.force ? " force" : ""} ${namespace}/${name} ${opts.manager} ${JSON.stringify(spec)}`,
    );
    const next = {
      ...p,
      metadata: { ...p.metadata, generation: (p.metadata.generation ?? 1) + 1 },
      spec: { ...p.spec, ...spec },
    } as ScalePlatform;
    if (!opts.dryRun) this.setPlatform(next);
    return next;
  }
  /** Only what the dashboard sends: `test` an entry of a spec list, then `remove` it. */
  async jsonPatchPlatform(namespace: string, name: string, ops: unknown[], manager: string) {
    this.check("patch", "scaleplatforms", namespace);
    const p = structuredClone(await this.getPlatform(namespace, name));
    for (const op of ops as { op: string; path: string; value?: unknown }[]) {
      const [, , key = "", i = ""] = op.path.split("/");
      const list = (p.spec as unknown as Record<string, unknown[] | undefined>)[key] ?? [];
      if (op.op === "test" && JSON.stringify(list[Number(i)]) !== JSON.stringify(op.value))
        throw new ApiError(422, "Invalid", `the test operation (${op.path}) failed`);
      if (op.op === "remove") list.splice(Number(i), 1);
    }
    this.calls.push(`json-patch platform ${namespace}/${name} ${manager} ${JSON.stringify(ops)}`);
    this.setPlatform(p);
    return p;
  }
  async watchPlatform(
    namespace: string,
    name: string,
    onChange: (p: ScalePlatform) => void,
    signal: AbortSignal,
  ): Promise<void> {
    this.check("watch", "scaleplatforms", namespace);
    const w = (p: ScalePlatform) => {
      if (p.metadata.namespace === namespace && p.metadata.name === name) onChange(p);
    };
    const current = this.platforms.get(`${namespace}/${name}`);
    if (current) onChange(current);
    this.watchers.add(w);
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    this.watchers.delete(w);
  }
  /** What the metrics API would answer, by "namespace selector"; absent means not served. */
  readonly usage = new Map<string, PodUsage>();
  async podUsage(namespace: string, selector: string): Promise<PodUsage | undefined> {
    this.check("list", "pods.metrics.k8s.io", namespace);
    return this.usage.get(`${namespace} ${selector}`);
  }
  /** The /metrics text of each ready app pod, by "namespace selector" (pod name → text). */
  readonly metricsTexts = new Map<string, Map<string, string>>();
  async podMetricsTexts(namespace: string, selector: string, path: string): Promise<Map<string, string>> {
    this.check("list", "pods", namespace);
    this.check("get", "pods/proxy", namespace);
    this.calls.push(`metrics ${namespace} ${selector} ${path}`);
    return new Map(this.metricsTexts.get(`${namespace} ${selector}`) ?? []);
  }
  async listPlatformBackups(namespace: string): Promise<ScalePlatformBackup[]> {
    this.check("list", "scaleplatformbackups", namespace);
    return [...this.backups.values()].filter((b) => b.metadata.namespace === namespace);
  }
  async createPlatformBackup(backup: KubeObject): Promise<ScalePlatformBackup> {
    const ns = backup.metadata.namespace ?? "";
    this.check("create", "scaleplatformbackups", ns);
    const name = backup.metadata.name ?? `${backup.metadata.generateName ?? ""}x${++this.backupSeq}`;
    const b = { ...backup, metadata: { ...backup.metadata, name } } as ScalePlatformBackup;
    this.backups.set(`${ns}/${name}`, b);
    this.calls.push(`create backup ${ns}/${name} ${b.spec.type}`);
    return b;
  }
  async deletePlatformBackup(namespace: string, name: string): Promise<void> {
    this.check("delete", "scaleplatformbackups", namespace);
    if (!this.backups.delete(`${namespace}/${name}`))
      throw new ApiError(404, "NotFound", `scaleplatformbackups "${name}" not found`);
    this.calls.push(`delete backup ${namespace}/${name}`);
  }
  async watchPlatformBackups(namespace: string, onChange: () => void, signal: AbortSignal): Promise<void> {
    this.check("watch", "scaleplatformbackups", namespace);
    onChange();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }
  async listPlatformRestores(namespace: string): Promise<ScalePlatformRestore[]> {
    this.check("list", "scaleplatformrestores", namespace);
    return [...this.restores.values()].filter((r) => r.metadata.namespace === namespace);
  }
  async createPlatformRestore(restore: KubeObject, dryRun: boolean): Promise<ScalePlatformRestore> {
    const ns = restore.metadata.namespace ?? "";
    this.check("create", "scaleplatformrestores", ns);
    if (this.refuseRestore)
      throw new ApiError(422, "Invalid", "invalid", {
        message: "ScalePlatformRestore is invalid",
        details: { causes: [this.refuseRestore] },
      });
    const name = restore.metadata.name ?? `${restore.metadata.generateName ?? ""}r${this.restores.size + 1}`;
    const r = {
      ...restore,
      metadata: { ...restore.metadata, name, creationTimestamp: new Date().toISOString() },
    } as ScalePlatformRestore;
    this.calls.push(`create restore${dryRun ? " dry-run" : ""} ${ns}/${name} ${JSON.stringify(r.spec)}`);
    if (!dryRun) this.restores.set(`${ns}/${name}`, r);
    return r;
  }
  async patchPlatformRestore(namespace: string, name: string, patch: unknown): Promise<ScalePlatformRestore> {
    this.check("patch", "scaleplatformrestores", namespace);
    const r = this.restores.get(`${namespace}/${name}`);
    if (!r) throw new ApiError(404, "NotFound", `scaleplatformrestores "${name}" not found`);
    const next = { ...r, spec: { ...r.spec, ...(patch as { spec?: object }).spec } } as ScalePlatformRestore;
    this.restores.set(`${namespace}/${name}`, next);
    this.calls.push(`patch restore ${namespace}/${name} ${JSON.stringify(patch)}`);
    return next;
  }
  async watchPlatformRestores(namespace: string, onChange: () => void, signal: AbortSignal): Promise<void> {
    this.check("watch", "scaleplatformrestores", namespace);
    onChange();
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  }

  /** Stores a platform (as the operator's status write would) and tells the watchers. */
  setPlatform(p: ScalePlatform): void {
    this.platforms.set(`${p.metadata.namespace}/${p.metadata.name}`, p);
    for (const w of this.watchers) w(p);
  }
}

/** A stored task with defaults, for tests. */
export function sampleTask(
  name: string,
  namespace = "default",
  spec: Partial<ScheduledTask["spec"]> = {},
): ScheduledTask {
  return {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScheduledTask",
    metadata: { name, namespace, uid: `uid-${name}` },
    spec: {
      schedule: "*/5 * * * *",
      timezone: "UTC",
      timeoutSeconds: 300,
      language: "Bash",
      script: "echo hello",
      plan: "Micro",
      suspend: false,
      concurrencyPolicy: "Forbid",
      retries: 0,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      ...spec,
    },
    status: { phase: "Running" },
  };
}

/** Signs in through the form of an in-process dashboard (fastify inject); returns cookie and CSRF token. */
export async function injectSignIn(
  app: {
    inject: (o: object) => Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>;
  },
  token: string,
  page: string,
): Promise<{ cookie: string; csrf: string; body: string }> {
  const cookieOf = (h: Record<string, unknown>) => String(h["set-cookie"] ?? "").split(";")[0] ?? "";
  const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
  const form = await app.inject({ method: "GET", url: "/dashboard/sign-in" });
  const res = await app.inject({
    method: "POST",
    url: "/dashboard/sign-in",
    headers: { cookie: cookieOf(form.headers), origin: "http://dash.test", host: "dash.test" },
    payload: { _csrf: csrfOf(form.body), token, next: page },
  });
  if (res.statusCode !== 303) throw new Error(`sign-in answered ${res.statusCode}`);
  const cookie = cookieOf(res.headers);
  const got = await app.inject({ method: "GET", url: page, headers: { cookie } });
  return { cookie, csrf: csrfOf(got.body), body: got.body };
}
