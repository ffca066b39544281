// The operator: config → logger → client → manager (informers, controllers, leader election,
// probes) → signals. Wiring only; behaviour lives in the controllers and the runtime. The
// process entry is main.ts, which loads this module.

import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import type { HistoryTls } from "./archive/http.ts";
import { type Config, loadConfig } from "./config.ts";
import {
  platformControllerConfigFrom,
  registerScalePlatformControllers,
} from "./controllers/scaleplatform/index.ts";
import { KubePodLogReader } from "./controllers/taskexecution/logs.ts";
import { registerScheduledTaskControllers, taskControllerConfigFrom } from "./controllers/tasks.ts";
import { createLogger, SecretRegistry } from "./log.ts";
import { registerNotificationControllers } from "./notify/index.ts";
import { RealKubeClient } from "./runtime/client.ts";
import { createKubeManager, loadKubeConfig } from "./runtime/kube.ts";
import { KubeTransport } from "./runtime/rest.ts";

/**
 * The archive's DSN and the history endpoint's certificate: as configured, or from the Secrets
 * named in the configuration, which are made in the operator's namespace when missing.
 */
async function archiveSecrets(
  cfg: Config,
  client: RealKubeClient,
  log: Logger,
): Promise<{ dsn: string; tls: (HistoryTls & { ca?: string }) | undefined }> {
  const a = cfg.archive;
  const namespace = cfg.leaderElection.namespace;
  if (!a.dsn && !a.secret.name) return { dsn: "", tls: undefined };
  const fromSecret = !a.dsn || (!a.tls.certFile && a.tls.secret.name);
  if (!fromSecret) return { dsn: a.dsn, tls: a.tls };
  const m = await import("./archive/secrets.ts");
  const dsn =
    a.dsn ||
    (await m.withRetries(
      "archive secret",
      () => m.ensureArchiveSecret(client, { namespace, name: a.secret.name, host: a.secret.host, log }),
      log,
    ));
  if (a.tls.certFile || !a.tls.secret.name) return { dsn, tls: a.tls };
  const pem = await m.withRetries(
    "history TLS secret",
    () =>
      m.ensureHistoryTlsSecret(client, {
        namespace,
        name: a.tls.secret.name,
        dnsNames: a.tls.secret.dnsNames,
        log,
      }),
    log,
  );
  return { dsn, tls: pem };
}

/** Starts the operator and resolves with the process exit code once it has stopped. */
export async function runOperator(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const cfg = loadConfig(argv, env);
  const secrets = new SecretRegistry();
  const log = createLogger({ level: cfg.logLevel, secrets });
  const kc = loadKubeConfig(cfg.kubeconfig || undefined);
  const transport = KubeTransport.create(kc, { requestTimeoutMs: cfg.kubeRequestTimeoutSeconds * 1000 });
  const le = cfg.leaderElection;
  const manager = createKubeManager(transport, {
    log,
    namespace: cfg.namespace,
    http: { host: cfg.httpHost, port: cfg.httpPort },
    leaderElection: le.enabled
      ? {
          namespace: le.namespace,
          name: le.name,
          identity: le.identity,
          leaseDurationMs: le.enabled ? le.leaseDurationSeconds * 1000 : undefined,
          renewDeadlineMs: le.renewDeadlineSeconds * 1000,
          retryPeriodMs: le.retryPeriodSeconds * 1000,
        }
      : false,
    shutdownTimeoutMs: cfg.shutdownTimeoutSeconds * 1000,
  });
  // The archive's Secrets the chart leaves to the operator (made here when missing, never changed).
  const { dsn, tls: historyTls } = await archiveSecrets(cfg, new RealKubeClient(transport), log);
  // The archive's modules (PostgreSQL client, query builder, HTTP server) load only when an archive
  // is configured: about a fifth of the operator's start-up CPU otherwise (docs/benchmarks.md).
  const archiveMods = dsn
    ? await Promise.all([
        import("./archive/store.ts"),
        import("./archive/maintenance.ts"),
        import("./archive/http.ts"),
      ])
    : undefined;
  const archive = archiveMods && dsn ? new archiveMods[0].PgExecutionArchive(dsn) : undefined;
  const stopMaintenance =
    archive && archiveMods
      ? archiveMods[1].startArchiveMaintenance(archive, {
          retentionDays: cfg.controllers.taskExecution.retentionDays,
          intervalMs: cfg.archive.pruneIntervalSeconds * 1000,
          log,
          isLeader: () => manager.isLeader(),
        })
      : undefined;
  registerScheduledTaskControllers(manager, {
    config: taskControllerConfigFrom({ ...cfg.controllers, archive: cfg.archive }),
    logs: new KubePodLogReader(transport),
    workers: cfg.workers,
    secrets,
    archive,
  });
  // Over HTTPS the endpoint also serves the users the API server sends it as the APIService
  // history.cronscale.io (its front-proxy settings are read from kube-system), whose caBundle the
  // operator keeps equal to the endpoint's CA (tls.caFile, or ca.crt of the Secret it made).
  const frontProxy =
    archive && archiveMods && historyTls
      ? await archiveMods[2].watchRequestHeaderAuth(new RealKubeClient(transport), log)
      : undefined;
  const secretCa = historyTls && "ca" in historyTls ? historyTls.ca : undefined;
  const caPem = secretCa
    ? () => secretCa
    : cfg.archive.tls.caFile
      ? () => readFileSync(cfg.archive.tls.caFile, "utf8")
      : undefined;
  const stopCaBundle =
    archive && archiveMods && cfg.archive.apiService && caPem
      ? await archiveMods[2].keepApiServiceCaBundle(
          new RealKubeClient(transport),
          cfg.archive.apiService,
          caPem,
          log,
        )
      : undefined;
  const history =
    archive && archiveMods
      ? await archiveMods[2].startHistoryServer(
          {
            host: cfg.archive.httpHost,
            port: cfg.archive.httpPort,
            log,
            tls: historyTls,
            requestHeader: frontProxy?.current,
          },
          {
            archive,
            authorizer: new archiveMods[2].KubeAuthorizer(new RealKubeClient(transport)),
          },
        )
      : undefined;
  const platformConfig = platformControllerConfigFrom(cfg.controllers.scalePlatform);
  platformConfig.defaultBackup.s3.credentialsSecret.namespace ||= le.namespace;
  registerScalePlatformControllers(manager, {
    config: platformConfig,
    workers: cfg.workers,
  });
  registerNotificationControllers(manager, {
    config: { ...cfg.notifications, secretNamespace: cfg.notifications.secretNamespace || le.namespace },
    workers: cfg.workers,
    identity: le.identity,
    leaseDurationMs: le.leaseDurationSeconds * 1000,
  });
  log.info(
    {
      namespace: cfg.namespace || "(all)",
      leaderElection: le.enabled,
      port: cfg.httpPort,
      archive: archive !== undefined,
    },
    "starting operator",
  );
  const code = await manager.runUntilSignal();
  stopMaintenance?.();
  frontProxy?.stop();
  stopCaBundle?.();
  history?.close();
  await archive?.close();
  return code;
}
