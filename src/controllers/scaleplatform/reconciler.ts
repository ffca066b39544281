import { PlatformReason } from "../../api/v1alpha1/conditions.ts";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import {
  type ScalePlatform,
  type ScalePlatformSpec,
  type ScalePlatformStatus,
  scalePlatformSpecSchema,
} from "../../api/v1alpha1/scaleplatform.ts";
import { KeyBackoff } from "../../runtime/backoff.ts";
import { type ExecutedPlan, executePlan, foreignChild } from "../../runtime/children.ts";
import { readOne } from "../../runtime/read.ts";
import type { ObjectKey, ReconcileContext, ReconcileResult, Reconciler } from "../../runtime/types.ts";
import { readDefaultBackupCredentials } from "./backup/default.ts";
import type { BackupMetrics } from "./backup/metrics.ts";
import { backupObservation } from "./backup/observe.ts";
import { withBackupStatus } from "./backup/status.ts";
import type { PlatformControllerConfig } from "./config.ts";
import { customMetricValues } from "./custommetrics.ts";
import { currentStatus, currentSteps, type Observed } from "./derive.ts";
import { appImage } from "./desired/app.ts";
import { type PlatformInputs, platformInputs } from "./desired/common.ts";
import { configData } from "./desired/configmap.ts";
import type { RandomString } from "./desired/credentials.ts";
import { FeatureDetector } from "./features.ts";
import { type HealthProbe, type HealthState, HealthTracker, httpHealthProbe } from "./health.ts";
import { checkHealth, type HealthCheckDeps } from "./healthcheck.ts";
import { findHostClash } from "./hosts.ts";
import { observePlatform, tlsObservation } from "./observe.ts";
import { type PlatformPart, type PlatformWorld, planChildren, storagePlan } from "./plan.ts";
import { withFeatures } from "./planfeatures.ts";
import { allFinished, type Step } from "./progress.ts";
import { cryptoRandom } from "./random.ts";
import { refuse, specIssues, writeStatus } from "./report.ts";
import { resolveSecretRefs, type SecretResolution } from "./secrets.ts";

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
 * Reconciles one ScalePlatform: referenced Secrets → the world read once → the children planned
 * (pure) → a name held by someone else refuses, else the plan is executed (writes only where they
 * differ, prunes what is no longer planned) → health check → steps and status (written only when
 * they differ) → Events for step changes → requeue.
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

    const secrets = await this.resolveSecrets(ctx, key, inp);
    inp.secretsRevision = secrets.revision;
    const world = await observePlatform(ctx, this.cached, inp, secrets, this.detector);
    const plan = planChildren(inp, world, this.random);
    const foreign = foreignChild(plan, world.live, platform.metadata.uid, "platform");
    if (foreign) return refuse(ctx, platform, PlatformReason.NameConflict, foreign);
    const done = await executePlan(ctx, plan, world, {
      uid: platform.metadata.uid,
      log: { platform: key.name },
    });
    await this.announce(ctx, inp, done);

    const health = await checkHealth(
      this.checks,
      ctx,
      key,
      inp,
      world.pods,
      now,
      this.checkEveryMs(platform),
    );
    const seen = this.seen(inp, world, done, health);
    const created = done.created.map((c) => c.object);
    const backups = backupObservation(inp, world, created);

    const steps = currentSteps(this.config, key, inp, seen, configData(inp), secrets.held, now);
    this.countCompletingCheck(key, inp, steps);
    const status = withFeatures(
      inp,
      withBackupStatus(inp, currentStatus(key, inp, steps, seen, secrets, now), backups, now),
    );
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
    const creds = await readDefaultBackupCredentials(ctx, this.config, spec);
    return platformInputs(platform, spec, this.config, { ...features, customMetricValues: values }, creds);
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

  /** The world as the plan's writes left it, for the steps and the status. */
  private seen(
    inp: PlatformInputs,
    world: PlatformWorld,
    done: ExecutedPlan<PlatformPart>,
    health: HealthState,
  ): Observed {
    const missing = done.created
      .filter((c) => c.child.part === "infrastructure")
      .map((c) => `${c.object.kind}/${c.object.metadata.name}`);
    if (!world.pvc) missing.push("PersistentVolumeClaim (database volume)");
    return {
      live: done.live,
      missing,
      pvc: world.pvc,
      storage: storagePlan(inp, world).storage,
      pods: world.pods,
      health,
      tls: tlsObservation(inp, done.live, world.tlsSecret),
      ingressClassExists: world.ingressClassExists,
    };
  }

  /** The generated backup key is announced: it must be kept outside the cluster. */
  private async announce(ctx: ReconcileContext, inp: PlatformInputs, done: ExecutedPlan<PlatformPart>) {
    for (const { child, object } of done.created) {
      if (child.part !== "backup" || object.kind !== "Secret") continue;
      await ctx.events.normal(
        inp.platform,
        "BackupKeyGenerated",
        "Backup",
        `encryption passphrase generated into Secret ${object.metadata.name} (not deleted with the platform; keep a copy outside the cluster)`,
      );
    }
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
