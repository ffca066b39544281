import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { findHelm } from "../../hack/gen/crds.ts";
import { loadConfig } from "../../src/config.ts";
import { platformControllerConfigFrom } from "../../src/controllers/scaleplatform/config.ts";

// The chart configures the operator through CRONSCALE_* env vars. A misspelt name would be
// ignored at best, so the rendered Deployment's env is fed to the operator's own config parser
// and every chart value must arrive where the operator reads it.

const chart = fileURLToPath(new URL("../../charts/cronscale", import.meta.url));
const helm = findHelm();
if (!helm) console.warn("chart config test skipped: no helm binary (hack/cluster/build.sh helm builds it)");

type Env = { name: string; value?: string };

function renderedEnv(sets: string[]): Record<string, string> {
  const out = execFileSync(helm!, ["template", "cs", chart, ...sets.flatMap((s) => ["--set", s])], {
    encoding: "utf8",
  });
  const dep = parseAllDocuments(out)
    .map((d) => d.toJS())
    .find((o) => o?.kind === "Deployment");
  const env: Env[] = dep.spec.template.spec.containers[0].env;
  return Object.fromEntries(env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
}

describe.skipIf(!helm)("chart values reach the operator's configuration", () => {
  it("platform and task settings set in values.yaml are what the operator parses", () => {
    const env = renderedEnv([
      "platform.image=registry.test/commerce:2",
      "platform.databaseImage=registry.test/postgres:17",
      "platform.backupRunnerImage=registry.test/node:24",
      "platform.requestFraction=1",
      "platform.defaultClusterIssuer=letsencrypt",
      "backup.defaultRepository.s3.endpoint=s3.storage.svc:9000",
      "backup.defaultRepository.s3.bucket=shops",
      "backup.defaultRepository.s3.credentialsSecret.name=s3-keys",
      "backup.defaultRepository.s3.caConfigMapName=kube-root-ca.crt",
      "taskImages.python=registry.test/python:3",
      "taskImagePullPolicy=Always",
      "archive.window=5",
      "archive.retentionDays=2",
      "archive.pruneIntervalSeconds=60",
      "billing.currency=EUR",
      "billing.pricePerSecond.large=0.0001",
      "workers=7",
      "logLevel=debug",
      "metrics.port=9090",
      "leaderElection.leaseDurationSeconds=33",
      "leaderElection.renewDeadlineSeconds=22",
      "leaderElection.retryPeriodSeconds=3",
    ]);
    const cfg = loadConfig([], env);
    const platform = platformControllerConfigFrom(cfg.controllers.scalePlatform);
    expect(platform.images).toEqual({
      platform: "registry.test/commerce:2",
      database: "registry.test/postgres:17",
      backupRunner: "registry.test/node:24",
    });
    expect(platform.requestFraction).toBe(1);
    expect(platform.defaultIssuer).toEqual({ name: "letsencrypt", kind: "ClusterIssuer" });
    expect(platform.defaultBackup.s3).toEqual({
      endpoint: "s3.storage.svc:9000",
      bucket: "shops",
      region: "us-east-1",
      pathPrefix: "/cronscale",
      credentialsSecret: {
        namespace: "",
        name: "s3-keys",
        accessKeyIdKey: "accessKeyId",
        secretAccessKeyKey: "secretAccessKey",
      },
      caConfigMapName: "kube-root-ca.crt",
      caKey: "ca.crt",
    });
    expect(cfg.controllers.scheduledTask.images.python).toBe("registry.test/python:3");
    expect(cfg.controllers.scheduledTask.imagePullPolicy).toBe("Always");
    expect(cfg.archive).toMatchObject({ window: 5, pruneIntervalSeconds: 60, outputMaxChars: 1048576 });
    expect(cfg.controllers.taskExecution.retentionDays).toBe(2);
    expect(cfg.controllers.taskExecution.billing).toEqual({
      currency: "EUR",
      pricePerSecond: { micro: "0.000004", small: "0.000008", medium: "0.000016", large: "0.0001" },
    });
    expect(cfg.workers).toBe(7);
    expect(cfg.logLevel).toBe("debug");
    expect(cfg.httpPort).toBe(9090);
    expect(cfg.leaderElection).toMatchObject({
      enabled: true,
      name: "cs-cronscale-leader",
      leaseDurationSeconds: 33,
      renewDeadlineSeconds: 22,
      retryPeriodSeconds: 3,
    });
  });

  it("notification channels set in values.yaml are what the operator parses", () => {
    const env = renderedEnv([
      "notifications.email.host=smtp.example.test",
      "notifications.email.port=465",
      "notifications.email.security=TLS",
      "notifications.email.rejectUnauthorized=false",
      "notifications.email.from=ops@example.test",
      "notifications.email.username=ops",
      "notifications.email.passwordSecret.name=smtp",
      "notifications.signingSecret.name=signing",
      "notifications.sms.url=https://sms.example.test/send",
      "notifications.sms.tokenSecret.name=sms",
    ]);
    const n = loadConfig([], env).notifications;
    expect(n.email).toEqual({
      host: "smtp.example.test",
      port: 465,
      security: "TLS",
      rejectUnauthorized: false,
      from: "ops@example.test",
      username: "ops",
      passwordSecret: { name: "smtp", key: "password" },
    });
    expect(n.signingSecret).toEqual({ name: "signing", key: "secret" });
    expect(n.sms).toEqual({
      url: "https://sms.example.test/send",
      from: "",
      tokenSecret: { name: "sms", key: "token" },
    });
  });

  it("names the bundled PostgreSQL's Secret for the operator to read or make; or passes the user's DSN", () => {
    const render = (sets: string[]) => {
      const out = execFileSync(helm!, ["template", "cs", chart, ...sets.flatMap((s) => ["--set", s])], {
        encoding: "utf8",
      });
      const docs = parseAllDocuments(out).map((d) => d.toJS());
      const dep = docs.find((o) => o?.kind === "Deployment");
      const env: { name: string; value?: string; valueFrom?: unknown }[] =
        dep.spec.template.spec.containers[0].env;
      const values = Object.fromEntries(
        env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]),
      );
      return { env, cfg: loadConfig([], values), docs };
    };
    const bundled = render([]);
    // No Secret in the output (helm template is the same every time); the operator makes it.
    expect(bundled.docs.some((o) => o?.kind === "Secret")).toBe(false);
    expect(bundled.env.find((e) => e.name === "CRONSCALE_ARCHIVE__DSN")).toBeUndefined();
    expect(bundled.cfg.archive.secret).toEqual({
      name: "cs-cronscale-archive",
      host: "cs-cronscale-archive.default.svc",
    });
    const sts = bundled.docs.find((o) => o?.kind === "StatefulSet");
    expect(sts.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    // The database and its password-sync step read the password from that same Secret.
    for (const c of [...sts.spec.template.spec.initContainers, ...sts.spec.template.spec.containers])
      expect(c.env).toContainEqual({
        name: "POSTGRES_PASSWORD",
        valueFrom: { secretKeyRef: { name: "cs-cronscale-archive", key: "password" } },
      });
    // The history endpoint's certificate: made by the operator into a Secret it names.
    expect(bundled.cfg.archive.tls.secret.name).toBe("cs-cronscale-history-tls");
    expect(bundled.cfg.archive.tls.secret.dnsNames).toContain("cs-cronscale-history.default.svc");
    expect(bundled.cfg.archive.tls.certFile).toBe("");

    const mine = render(["archive.postgres.existingSecret=pg-pass", "archive.tls.existingSecret=hist-tls"]);
    expect(mine.cfg.archive.secret.name).toBe("pg-pass");
    expect(mine.cfg.archive.tls).toMatchObject({
      certFile: "/etc/cronscale/history-tls/tls.crt",
      secret: { name: "" },
    });
    expect(JSON.stringify(mine.docs)).toContain('"secretName":"hist-tls"');

    const own = render([
      "archive.postgres.enabled=false",
      "archive.existingSecret.name=mydb",
      "archive.existingSecret.key=url",
    ]);
    expect(own.env.find((e) => e.name === "CRONSCALE_ARCHIVE__DSN")?.valueFrom).toEqual({
      secretKeyRef: { name: "mydb", key: "url" },
    });
    expect(own.cfg.archive.secret.name).toBe("");
    expect(own.docs.find((o) => o?.kind === "StatefulSet")).toBeUndefined();
    const none = render(["archive.postgres.enabled=false"]);
    expect(none.env.find((e) => e.name === "CRONSCALE_ARCHIVE__DSN")).toBeUndefined();
    expect(none.cfg.archive.secret.name).toBe("");
    expect(none.cfg.archive.tls.secret.name).toBe("");
  });

  it("an unknown platform setting is refused, naming it", () => {
    const cfg = loadConfig([], { CRONSCALE_CONTROLLERS__SCALE_PLATFORM__DATABASE_IMAGE: "x" });
    expect(() => platformControllerConfigFrom(cfg.controllers.scalePlatform)).toThrow(
      /controllers\.scalePlatform.*databaseImage/,
    );
  });
});
