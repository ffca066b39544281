import { randomInt } from "node:crypto";
import { CONDITION_READY, PlatformReason } from "../../api/v1alpha1/conditions.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  platformAppName,
  platformCredentialsSecretName,
  platformDatabaseName,
  platformDatabaseSecretName,
  platformTlsName,
} from "../../api/v1alpha1/names.ts";
import {
  type ScalePlatform,
  type ScalePlatformStatus,
  scalePlatformSpecSchema,
} from "../../api/v1alpha1/scaleplatform.ts";
import { applyStatusIfChanged, needsApply } from "../../runtime/apply.ts";
import { KeyBackoff } from "../../runtime/backoff.ts";
import { type Condition, setCondition } from "../../runtime/conditions.ts";
import { isConflict } from "../../runtime/errors.ts";
import type {
  KubeObject,
  ObjectKey,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
} from "../../runtime/types.ts";
import { controlledBy } from "../scheduledtask/prune.ts";
import { readOne } from "../scheduledtask/read.ts";
import type { PlatformControllerConfig } from "./config.ts";
import {
  appImage,
  configHash,
  desiredAppDeployment,
  desiredAppService,
  liveConfigHash,
} from "./desired/app.ts";
import { appPodSelector, nameOf, type PlatformInputs, platformInputs } from "./desired/common.ts";
import { configData, desiredConfigMap } from "./desired/configmap.ts";
import { newCredentialsSecret, newDatabaseSecret, type RandomString } from "./desired/credentials.ts";
import { desiredDatabaseService, desiredDatabaseStatefulSet } from "./desired/database.ts";
import { desiredHpa } from "./desired/hpa.ts";
import { desiredCertificate, desiredIngress } from "./desired/ingress.ts";
import { secretFromUses, secretRefUses } from "./desired/secretrefs.ts";
import { stepEvents } from "./events.ts";
import { FeatureDetector } from "./features.ts";
import { type HealthProbe, HealthTracker, httpHealthProbe } from "./health.ts";
import { appPods, healthUrl, ingressClassExists, observeTls, reconcileStorage } from "./observe.ts";
import { allFinished, deriveSteps, type Step } from "./progress.ts";
import { checkSecretRefs, describeProblems } from "./secrets.ts";
import { computeStatus } from "./status.ts";

const ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Cryptographically random alphanumeric strings. */
export const cryptoRandom: RandomString = (n) =>
  Array.from({ length: n }, () => ALPHANUM[randomInt(ALPHANUM.length)]).join("");

/** While provisioning or updating, look again this often (ms). */
const PROGRESS_REQUEUE_MS = 2000;
/**
 * Re-reads of a missing referenced Secret (nothing watches the user's Secrets): 2 s doubling,
 * capped by the health check interval (a held platform keeps being checked at its usual pace).
 */
const SECRET_BACKOFF_BASE_MS = 2000;

/** Injected dependencies (real ones by default). */
export interface PlatformReconcilerDeps {
  random?: RandomString;
  probe?: HealthProbe;
  detector?: FeatureDetector;
  health?: HealthTracker;
  /** "apiVersion|kind" of the kinds the manager's informers watch. */
  cached?: ReadonlySet<string>;
  /** Randomness of the backoff jitter (Math.random by default). */
  jitter?: () => number;
}

/**
 * Reconciles one ScalePlatform: credentials (created once) → children (applied only when they
 * differ) → stop/TLS pruning → volume growth → health check → steps and status (written only
 * when they differ) → Events for step changes → requeue.
 */
export class ScalePlatformReconciler implements Reconciler {
  private readonly config: PlatformControllerConfig;
  private readonly random: RandomString;
  private readonly probe: HealthProbe;
  private readonly detector: FeatureDetector;
  readonly health: HealthTracker;
  private readonly cached: ReadonlySet<string>;
  private readonly secretBackoff: KeyBackoff;

  constructor(config: PlatformControllerConfig, deps: PlatformReconcilerDeps = {}) {
    this.config = config;
    this.random = deps.random ?? cryptoRandom;
    this.probe = deps.probe ?? httpHealthProbe;
    this.detector = deps.detector ?? new FeatureDetector(config.featureRecheckSeconds * 1000);
    this.health = deps.health ?? new HealthTracker();
    this.cached = deps.cached ?? new Set();
    this.secretBackoff = new KeyBackoff({
      baseMs: SECRET_BACKOFF_BASE_MS,
      maxMs: Math.max(SECRET_BACKOFF_BASE_MS, config.healthCheck.intervalSeconds * 1000),
      random: deps.jitter,
    });
  }

  /** One pass for the platform named by `key`. */
  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const platform = await readOne<ScalePlatform>(
      ctx,
      this.cached,
      API_VERSION,
      "ScalePlatform",
      key.namespace,
      key.name,
    );
    if (!platform || platform.metadata.deletionTimestamp) {
      // Children go with the garbage collector (ownerReferences); the volume per its retention policy.
      this.detector.forgetPlatform(`${key.namespace}/${key.name}`);
      this.secretBackoff.forget(`${key.namespace}/${key.name}`);
      return {};
    }
    const parsed = scalePlatformSpecSchema.safeParse(platform.spec);
    if (!parsed.success) {
      const message = parsed.error.issues
        .map((i) => `spec.${i.path.join(".")}: ${i.message}`)
        .join("; ")
        .slice(0, 1000);
      return this.refuse(platform, PlatformReason.InvalidSpec, message, ctx);
    }
    const now = ctx.clock.now();
    const features = await this.detector.detect(ctx.client, now);
    const inp = platformInputs(platform, parsed.data, this.config, {
      ...features,
      customMetricValues: await this.customMetricValues(
        ctx,
        key,
        features.customMetrics,
        parsed.data.stopped,
      ),
    });
    const ns = key.namespace;

    // Generated Secrets: created once with fresh randomness, never rewritten.
    for (const [name, make] of [
      [platformDatabaseSecretName(key.name), newDatabaseSecret],
      [platformCredentialsSecretName(key.name), newCredentialsSecret],
    ] as const) {
      const live =
        (await readOne(ctx, this.cached, "v1", "Secret", ns, name)) ??
        (await ctx.client.get("v1", "Secret", ns, name));
      if (live && !controlledBy(live, platform.metadata.uid))
        return this.refuse(
          platform,
          PlatformReason.NameConflict,
          `Secret ${name} already exists and does not belong to this platform`,
          ctx,
        );
      if (live) continue;
      try {
        await ctx.client.create(make(inp, this.random));
        ctx.log.info({ platform: key.name, secret: name }, "generated credentials");
      } catch (err) {
        if (!isConflict(err)) throw err; // created meanwhile: keep the existing values
      }
    }

    // The user's Secrets the app's env refers to. While one is missing, its pods could not start:
    // the app's configuration (ConfigMap and Deployment) stays as it is, or is not created yet;
    // everything else proceeds. When stopped no pod starts, so nothing is held.
    const refs = secretRefUses(inp);
    const wholeSecrets = secretFromUses(inp);
    const secretProblems = await checkSecretRefs(ctx, ns, refs, wholeSecrets);
    const configHeld =
      secretProblems.length > 0 && !inp.spec.stopped ? describeProblems(secretProblems) : undefined;
    const backoffKey = `${ns}/${key.name}`;
    if (!configHeld) this.secretBackoff.forget(backoffKey);

    const data = configData(inp);
    const liveSts = await this.get(ctx, "apps/v1", "StatefulSet", ns, platformDatabaseName(key.name));
    const templateStorage = (
      liveSts?.spec as
        | { volumeClaimTemplates?: { spec?: { resources?: { requests?: { storage?: string } } } }[] }
        | undefined
    )?.volumeClaimTemplates?.[0]?.spec?.resources?.requests?.storage;
    const desired: KubeObject[] = [
      desiredConfigMap(inp, data),
      desiredDatabaseService(inp),
      desiredDatabaseStatefulSet(inp, templateStorage),
      desiredAppService(inp),
      desiredAppDeployment(inp, data),
      desiredIngress(inp),
    ];
    const cert = desiredCertificate(inp);
    if (cert) desired.push(cert);
    const hpa = desiredHpa(inp);
    if (hpa) desired.push(hpa);

    // Keyed by kind and name: two Services (app and database) share a kind.
    const live = new Map<string, KubeObject | undefined>();
    const keyOf = (d: KubeObject) => `${d.kind}/${d.metadata.name}`;
    for (const d of desired) {
      const name = d.metadata.name ?? "";
      const l = await this.get(ctx, d.apiVersion, d.kind, ns, name);
      if (l && !controlledBy(l, platform.metadata.uid))
        return this.refuse(
          platform,
          PlatformReason.NameConflict,
          `${d.kind} ${name} already exists and does not belong to this platform`,
          ctx,
        );
      live.set(keyOf(d), l);
    }
    const missing: string[] = [];
    for (let d of desired) {
      const l = live.get(keyOf(d));
      if (configHeld && (d.kind === "ConfigMap" || d.kind === "Deployment")) continue;
      // Starting after a stop: an HPA never scales a Deployment at 0 replicas, so set its minimum
      // once; later applies leave replicas out again and the HPA owns it.
      if (
        d.kind === "Deployment" &&
        !inp.spec.stopped &&
        (l?.spec as { replicas?: number } | undefined)?.replicas === 0
      ) {
        d = { ...d, spec: { ...(d.spec as object), replicas: inp.budget.app.minReplicas } };
      } else if (!needsApply(d, l)) continue;
      const applied = await ctx.client.apply(d);
      if (!l) missing.push(`${d.kind}/${d.metadata.name}`);
      live.set(keyOf(d), applied);
      ctx.log.info({ platform: key.name, kind: d.kind, name: d.metadata.name }, "applied child");
    }
    await this.prune(ctx, inp, hpa === undefined, cert === undefined);

    const { pvc, storage } = await reconcileStorage(ctx, this.cached, inp, this.detector);
    if (!pvc) missing.push("PersistentVolumeClaim (database volume)");
    const pods = await appPods(ctx, this.cached, inp);
    const prev = platform.status;
    const health = this.health.state(platform.metadata.uid ?? key.name, {
      uptimePercent: prev?.uptimePercent,
      since: prev?.uptimeSince,
      now,
      intervalMs: this.config.healthCheck.intervalSeconds * 1000,
    });
    const running = prev?.phase === "Running";
    const interval = running ? this.config.healthCheck.intervalSeconds * 1000 : PROGRESS_REQUEUE_MS;
    if (!inp.spec.stopped && this.health.due(platform.metadata.uid ?? key.name, now, interval)) {
      const url = healthUrl(this.config, inp, pods);
      const result = url
        ? await this.probe(url, this.config.healthCheck.timeoutMs)
        : {
            ok: false,
            latencyMs: 0,
            url: `pod:${this.config.appPort}${this.config.healthPath}`,
            message: "no ready app pod",
          };
      // Uptime counts only once the platform has been deployed and while it is meant to run.
      this.health.record(platform.metadata.uid ?? key.name, result, now, prev?.deployedTime !== undefined);
      ctx.log.debug(
        { platform: key.name, url: result.url, ok: result.ok, ms: result.latencyMs },
        "health check",
      );
    }
    const tls = await observeTls(ctx, this.cached, inp);
    const steps: Step[] = inp.spec.stopped
      ? ((prev?.steps as Step[] | undefined) ?? [])
      : deriveSteps(
          {
            missing,
            statefulSet: live.get(`StatefulSet/${platformDatabaseName(key.name)}`),
            pvc,
            deployment: live.get(`Deployment/${platformAppName(key.name)}`),
            appPods: pods,
            // Held back: the pods of the configuration in place are the current ones.
            configHash:
              (configHeld && liveConfigHash(live.get(`Deployment/${platformAppName(key.name)}`))) ||
              configHash(data),
            ingress: live.get(`Ingress/${platformAppName(key.name)}`),
            ingressClassExists: await ingressClassExists(ctx, inp),
            requireIngressAddress: this.config.requireIngressAddress,
            tls,
            health: health.last,
            healthAt: health.lastAt,
            configHeld,
          },
          prev?.steps as Step[] | undefined,
          now,
        );
    // The check that completes the first deployment is the first counted toward uptime, so the
    // status that first says Running already carries the uptime (no second write moments later).
    if (!prev?.deployedTime && !inp.spec.stopped && allFinished(steps))
      this.health.countLast(platform.metadata.uid ?? key.name);
    const status = computeStatus({
      inp,
      steps,
      previous: prev,
      deployment: live.get(`Deployment/${platformAppName(key.name)}`),
      pvc,
      appPods: pods,
      tls,
      storage,
      health,
      now,
      secretProblems,
      secretRefCount: refs.length + wholeSecrets.length,
    });
    if (
      await applyStatusIfChanged(
        ctx.client,
        { apiVersion: API_VERSION, kind: "ScalePlatform" },
        platform,
        status,
      )
    ) {
      for (const e of stepEvents(platform, prev, status, appImage(inp))) {
        await (e.warning
          ? ctx.events.warning(platform, e.reason, e.action, e.note)
          : ctx.events.normal(platform, e.reason, e.action, e.note));
      }
      if (prev?.phase !== status.phase)
        ctx.log.info(
          { platform: key.name, from: prev?.phase, to: status.phase, steps: status.stepSummary },
          "phase changed",
        );
    }
    if (configHeld) {
      // Nothing watches the user's Secrets: look again, less often the longer one stays missing.
      const after = this.secretBackoff.when(backoffKey);
      ctx.log.debug(
        { platform: key.name, problems: secretProblems.length, requeueAfterMs: after },
        "configuration held: referenced Secret missing",
      );
      return { requeueAfter: after };
    }
    const settled = status.phase === "Running" || status.phase === "Stopped";
    return { requeueAfter: settled ? this.config.healthCheck.intervalSeconds * 1000 : PROGRESS_REQUEUE_MS };
  }

  /** Which custom metrics have values for the app's pods (only asked when the API is served and the app runs). */
  private async customMetricValues(
    ctx: ReconcileContext,
    key: ObjectKey,
    served: boolean,
    stopped: boolean | undefined,
  ): Promise<Record<string, boolean> | undefined> {
    if (!served || stopped) return undefined;
    const cm = this.config.customMetrics;
    return this.detector.podMetricValues(
      ctx.client,
      `${key.namespace}/${key.name}`,
      key.namespace,
      appPodSelector(key.name),
      [cm.queueLength, cm.responseTime],
      ctx.clock.now(),
      (metric, err) =>
        ctx.log.warn(
          { platform: key.name, metric, err: (err as Error).message },
          "custom metrics query failed",
        ),
    );
  }

  /** The HPA while stopped, and a Certificate no longer wanted. */
  private async prune(
    ctx: ReconcileContext,
    inp: PlatformInputs,
    noHpa: boolean,
    noCert: boolean,
  ): Promise<void> {
    const ns = inp.platform.metadata.namespace ?? "";
    const gone: [string, string, string][] = [];
    if (noHpa) gone.push(["autoscaling/v2", "HorizontalPodAutoscaler", platformAppName(nameOf(inp))]);
    if (noCert && inp.features.certManager)
      gone.push(["cert-manager.io/v1", "Certificate", platformTlsName(nameOf(inp))]);
    for (const [apiVersion, kind, name] of gone) {
      const l = await this.get(ctx, apiVersion, kind, ns, name);
      if (!l || !controlledBy(l, inp.platform.metadata.uid)) continue;
      await ctx.client.delete(apiVersion, kind, ns, name);
      ctx.log.info({ platform: nameOf(inp), kind, name }, "deleted child");
    }
  }

  /** Cache first, then the API server (a cache miss may be an object of someone else). */
  private async get(ctx: ReconcileContext, apiVersion: string, kind: string, ns: string, name: string) {
    return (
      (await readOne(ctx, this.cached, apiVersion, kind, ns, name)) ??
      (await ctx.client.get(apiVersion, kind, ns, name))
    );
  }

  private async refuse(
    platform: ScalePlatform,
    reason: string,
    message: string,
    ctx: ReconcileContext,
  ): Promise<ReconcileResult> {
    const prev = platform.status;
    const conditions = setCondition(
      prev?.conditions as Condition[] | undefined,
      { type: CONDITION_READY, status: "False", reason, message },
      platform.metadata.generation,
      ctx.clock.now(),
    );
    const status: ScalePlatformStatus = {
      ...prev,
      observedGeneration: platform.metadata.generation,
      phase: "Failed",
      conditions,
    };
    if (
      await applyStatusIfChanged(
        ctx.client,
        { apiVersion: API_VERSION, kind: "ScalePlatform" },
        platform,
        status,
      )
    ) {
      await ctx.events.warning(platform, reason, "Validate", message);
      ctx.log.warn({ platform: platform.metadata.name, reason }, "platform refused");
    }
    // Terminal: nothing changes until the spec (or the conflicting object) does; look again slowly.
    return { requeueAfter: 60_000 };
  }
}
