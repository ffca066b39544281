import { PlatformReason } from "../../api/v1alpha1/conditions.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  type ScalePlatform,
  type ScalePlatformSpec,
  type ScalePlatformStatus,
  scalePlatformSpecSchema,
} from "../../api/v1alpha1/scaleplatform.ts";
import { KeyBackoff } from "../../runtime/backoff.ts";
import { readOne } from "../../runtime/read.ts";
import type { ObjectKey, ReconcileContext, ReconcileResult, Reconciler } from "../../runtime/types.ts";
import type { BackupMetrics } from "./backup/metrics.ts";
import { reconcileBackups } from "./backup/observe.ts";
import { withBackupStatus } from "./backup/status.ts";
import { applyChildren, desiredChildren, type LiveChildren } from "./children.ts";
import type { PlatformControllerConfig } from "./config.ts";
import { cryptoRandom, ensureCredentials } from "./credentials.ts";
import { customMetricValues } from "./custommetrics.ts";
import { currentStatus, currentSteps, type Observed } from "./derive.ts";
import { appImage } from "./desired/app.ts";
import { type PlatformInputs, platformInputs } from "./desired/common.ts";
import { configData } from "./desired/configmap.ts";
import type { RandomString } from "./desired/credentials.ts";
import { pruneMiddlewares } from "./edgeprune.ts";
import { FeatureDetector } from "./features.ts";
import { type HealthProbe, HealthTracker, httpHealthProbe } from "./health.ts";
import { checkHealth, type HealthCheckDeps } from "./healthcheck.ts";
import { findHostClash } from "./hosts.ts";
import { appPods, observeTls, reconcileStorage } from "./observe.ts";
import { pruneChildren, readOwnedChildren } from "./ownership.ts";
import { allFinished, type Step } from "./progress.ts";
import { refuse, specIssues, writeStatus } from "./report.ts";
import { resolveSecretRefs, type SecretResolution } from "./secrets.ts";

export { cryptoRandom };

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
  /** Backup metrics (none by default). */
  backupMetrics?: BackupMetrics;
}

/**
 * Reconciles one ScalePlatform: credentials (created once) → referenced Secrets → children
 * (applied only when they differ) → stop/TLS pruning → volume growth → health check → steps and
 * status (written only when they differ) → Events for step changes → requeue.
 */
export class ScalePlatformReconciler implements Reconciler {
  private readonly config: PlatformControllerConfig;
  private readonly random: RandomString;
  private readonly checks: HealthCheckDeps;
  private readonly detector: FeatureDetector;
  readonly health: HealthTracker;
  private readonly cached: ReadonlySet<string>;
  private readonly secretBackoff: KeyBackoff;
  private readonly hostBackoff: KeyBackoff;
  private readonly backupMetrics: BackupMetrics | undefined;
  /** uid of each platform seen, by "namespace/name": the health state to drop when it goes. */
  private readonly uids = new Map<string, string>();

  constructor(config: PlatformControllerConfig, deps: PlatformReconcilerDeps = {}) {
    this.config = config;
    this.random = deps.random ?? cryptoRandom;
    this.detector = deps.detector ?? new FeatureDetector(config.featureRecheckSeconds * 1000);
    this.health = deps.health ?? new HealthTracker();
    this.cached = deps.cached ?? new Set();
    this.backupMetrics = deps.backupMetrics;
    this.checks = { config, tracker: this.health, probe: deps.probe ?? httpHealthProbe };
    const backoff = {
      baseMs: SECRET_BACKOFF_BASE_MS,
      maxMs: Math.max(SECRET_BACKOFF_BASE_MS, config.healthCheck.intervalSeconds * 1000),
      random: deps.jitter,
    };
    this.secretBackoff = new KeyBackoff(backoff);
    // A platform held by a host conflict is re-checked at the same pace.
    this.hostBackoff = new KeyBackoff(backoff);
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
    if (!platform || platform.metadata.deletionTimestamp) return this.forget(key);
    this.track(key, platform.metadata.uid);
    const parsed = scalePlatformSpecSchema.safeParse(platform.spec);
    if (!parsed.success) return refuse(ctx, platform, PlatformReason.InvalidSpec, specIssues(parsed.error));
    const clash = await findHostClash(ctx, this.cached, platform, parsed.data);
    if (clash) {
      const message = `host ${clash.host} is served by ScalePlatform ${clash.holder}; this platform is held until the host is free`;
      await refuse(ctx, platform, PlatformReason.HostConflict, message);
      // Nothing of this platform changes when the other one goes or moves: look again, less often.
      return { requeueAfter: this.hostBackoff.when(`${key.namespace}/${key.name}`) };
    }
    this.hostBackoff.forget(`${key.namespace}/${key.name}`);
    const now = ctx.clock.now();
    const inp = await this.inputs(ctx, key, platform, parsed.data, now);

    const conflict = await ensureCredentials(ctx, this.cached, key, inp, this.random);
    if (conflict) return refuse(ctx, platform, PlatformReason.NameConflict, conflict);
    const secrets = await this.resolveSecrets(ctx, key, inp);
    inp.secretsRevision = secrets.revision;
    const data = configData(inp);
    const children = await this.reconcileChildren(ctx, key, inp, data, secrets.held);
    if ("conflict" in children) return refuse(ctx, platform, PlatformReason.NameConflict, children.conflict);

    const { pvc, storage } = await reconcileStorage(ctx, this.cached, inp, this.detector);
    if (!pvc) children.missing.push("PersistentVolumeClaim (database volume)");
    const pods = await appPods(ctx, this.cached, inp);
    const health = await checkHealth(this.checks, ctx, key, inp, pods, now, this.checkEveryMs(platform));
    const tls = await observeTls(ctx, this.cached, inp);
    const seen: Observed = { ...children, pvc, storage, pods, health, tls };

    const backups = await reconcileBackups(ctx, this.cached, key, inp, this.random);

    const steps = await currentSteps(ctx, this.config, key, inp, seen, data, secrets.held, now);
    this.countCompletingCheck(key, inp, steps);
    const status = withBackupStatus(inp, currentStatus(key, inp, steps, seen, secrets, now), backups, now);
    await writeStatus(ctx, key, platform, status, appImage(inp));
    this.backupMetrics?.record(key, inp.spec.stopped, status, backups);
    return this.requeue(ctx, key, status, secrets);
  }

  /** Remembers the platform's uid; a platform recreated under the same name starts afresh. */
  private track(key: ObjectKey, uid: string | undefined): void {
    if (!uid) return;
    const k = `${key.namespace}/${key.name}`;
    const prev = this.uids.get(k);
    if (prev && prev !== uid) this.health.forget(prev);
    this.uids.set(k, uid);
  }

  /** A platform gone or being deleted: its children go with the garbage collector. */
  private forget(key: ObjectKey): ReconcileResult {
    // The volume follows its retention policy; only the in-memory caches are ours to drop.
    const k = `${key.namespace}/${key.name}`;
    const uid = this.uids.get(k);
    if (uid) this.health.forget(uid);
    this.uids.delete(k);
    this.detector.forgetPlatform(`${key.namespace}/${key.name}`);
    this.secretBackoff.forget(`${key.namespace}/${key.name}`);
    this.hostBackoff.forget(`${key.namespace}/${key.name}`);
    this.backupMetrics?.forget(key);
    return {};
  }

  /** The builders' inputs: the parsed spec plus the detected cluster features. */
  private async inputs(
    ctx: ReconcileContext,
    key: ObjectKey,
    platform: ScalePlatform,
    spec: ScalePlatformSpec,
    now: Date,
  ): Promise<PlatformInputs> {
    const features = await this.detector.detect(ctx.client, now);
    const metrics = this.config.customMetrics;
    const values = await customMetricValues(
      ctx,
      this.detector,
      metrics,
      key,
      features.customMetrics,
      spec.stopped,
    );
    return platformInputs(platform, spec, this.config, { ...features, customMetricValues: values });
  }

  /**
   * The user's Secrets the app's env refers to: while one is missing, the app's configuration
   * (ConfigMap and Deployment) stays as it is, or is not created yet; everything else proceeds.
   */
  private async resolveSecrets(
    ctx: ReconcileContext,
    key: ObjectKey,
    inp: PlatformInputs,
  ): Promise<SecretResolution> {
    const secrets = await resolveSecretRefs(ctx, key.namespace, inp);
    if (!secrets.held) this.secretBackoff.forget(`${key.namespace}/${key.name}`);
    return secrets;
  }

  /**
   * Builds the desired children and applies those that differ (the app's configuration not while
   * `configHeld`), then prunes the unwanted; or the refusal message of a name held by someone else.
   */
  private async reconcileChildren(
    ctx: ReconcileContext,
    key: ObjectKey,
    inp: PlatformInputs,
    data: Record<string, string>,
    configHeld: string | undefined,
  ): Promise<{ live: LiveChildren; missing: string[] } | { conflict: string }> {
    const desired = await desiredChildren(ctx, this.cached, key, inp, data);
    const owned = await readOwnedChildren(ctx, this.cached, key.namespace, inp, desired.objects);
    if ("conflict" in owned) return owned;
    const missing = await applyChildren(ctx, key, inp, desired.objects, owned.live, configHeld);
    await pruneChildren(ctx, this.cached, inp, desired.hpa === undefined, desired.certificate === undefined);
    await pruneMiddlewares(ctx, this.cached, inp);
    return { live: owned.live, missing };
  }

  /** Health checks: every interval once Running; before that as often as the pass requeues. */
  private checkEveryMs(platform: ScalePlatform): number {
    return platform.status?.phase === "Running"
      ? this.config.healthCheck.intervalSeconds * 1000
      : PROGRESS_REQUEUE_MS;
  }

  /**
   * The check that completes the first deployment is the first counted toward uptime, so the
   * status that first says Running already carries the uptime (no second write moments later).
   */
  private countCompletingCheck(key: ObjectKey, inp: PlatformInputs, steps: Step[]): void {
    if (!inp.platform.status?.deployedTime && !inp.spec.stopped && allFinished(steps))
      this.health.countLast(inp.platform.metadata.uid ?? key.name);
  }

  /** When to look again: backoff while the configuration is held, else by phase. */
  private requeue(
    ctx: ReconcileContext,
    key: ObjectKey,
    status: ScalePlatformStatus,
    secrets: SecretResolution,
  ): ReconcileResult {
    if (secrets.held) {
      // Nothing watches the user's Secrets: look again, less often the longer one stays missing.
      const after = this.secretBackoff.when(`${key.namespace}/${key.name}`);
      ctx.log.debug(
        { platform: key.name, problems: secrets.problems.length, requeueAfterMs: after },
        "configuration held: referenced Secret missing",
      );
      return { requeueAfter: after };
    }
    const settled = status.phase === "Running" || status.phase === "Stopped";
    return { requeueAfter: settled ? this.config.healthCheck.intervalSeconds * 1000 : PROGRESS_REQUEUE_MS };
  }
}
