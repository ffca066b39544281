import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../src/runtime/types.ts";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { skipReason } from "../addons/support.ts";
import { applyPlatform, appPodsField, getObj, getPlatform, waitPhase } from "./helpers.ts";
import { usePlatformOperator } from "./operator.ts";

// A platform whose SMTP password lives in a Secret the user has not created yet: the operator
// names the field and the Secret, holds the app back (a pod referring to a missing Secret could
// never start), lets everything else proceed, and rolls the app out once the Secret exists.

const reason = await skipReason("dns", "storage", "ingress");
const NAME = "mailer";
const HOST = "mailer.platform.test";

type Container = { env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[] };

describe.skipIf(reason)("ScalePlatform with Secret references", () => {
  const ns = useNamespace("splats", { "pod-security.kubernetes.io/enforce": "restricted" });
  usePlatformOperator(ns);

  it("a missing Secret: ConfigurationReady=False naming the field, no app Deployment, the database proceeds", async () => {
    const r = await applyPlatform(ns.name, NAME, {
      plan: "Standard",
      domains: { platform: HOST },
      email: {
        smtp: {
          host: "smtp.platform.test",
          username: "shop",
          passwordSecretRef: { name: "mail", key: "password" },
        },
        fromAddress: "shop@platform.test",
      },
    });
    expect(r.code, r.stderr).toBe(0);
    const p = await waitFor(
      async () => {
        const cur = await getPlatform(ns.name, NAME);
        const c = cur.status?.conditions?.find((x) => x.type === "ConfigurationReady");
        return c?.status === "False" ? { cur, c } : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: "ConfigurationReady=False" },
    );
    expect(p.c.reason).toBe("SecretNotFound");
    expect(p.c.message).toContain("spec.email.smtp.passwordSecretRef");
    expect(p.c.message).toContain('"mail"');
    // Everything that does not need the Secret goes ahead: the database becomes ready.
    await waitFor(
      async () => {
        const sts = await getObj<KubeObject>(ns.name, "statefulset", `${NAME}-db`);
        return (sts?.status as { readyReplicas?: number } | undefined)?.readyReplicas === 1
          ? true
          : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000, what: "the database to be ready" },
    );
    expect(await getObj(ns.name, "ingress", NAME)).toBeDefined();
    expect(await getObj(ns.name, "deployment", NAME)).toBeUndefined();
    const events = await kubectl(
      [
        "get",
        "events.events.k8s.io",
        "--field-selector",
        "reason=SecretNotFound",
        "-o",
        "jsonpath={.items[*].note}",
      ],
      { namespace: ns.name },
    );
    expect(events.stdout).toContain("spec.email.smtp.passwordSecretRef");
  }, 240_000);

  it("the Secret appears: the app rolls out with SMTP_PASSWORD from it and the platform reaches Running", async () => {
    await kubectl(["create", "secret", "generic", "mail", "--from-literal=password=smtp-password-for-test"], {
      namespace: ns.name,
    });
    const p = await waitPhase(ns.name, NAME, "Running", 300_000);
    expect(p.status?.conditions?.find((c) => c.type === "ConfigurationReady")).toMatchObject({
      status: "True",
      reason: "SecretsResolved",
    });
    const dep = await getObj<KubeObject>(ns.name, "deployment", NAME);
    if (!dep) throw new Error("no app Deployment");
    const containers = (dep.spec as { template: { spec: { containers: Container[] } } }).template.spec
      .containers;
    const env = containers[0]?.env?.find((e) => e.name === "SMTP_PASSWORD");
    expect(env?.valueFrom?.secretKeyRef).toEqual({ name: "mail", key: "password" });
    // The value itself is in no object the operator wrote.
    expect(JSON.stringify(dep)).not.toContain("smtp-password-for-test");
    expect(JSON.stringify(await getObj(ns.name, "configmap", `${NAME}-config`))).not.toContain(
      "smtp-password-for-test",
    );
  }, 360_000);

  it("rotating the Secret rolls the app pods, which start with the new value", async () => {
    const podRevisions = () =>
      appPodsField(ns.name, NAME, "{.metadata.annotations.cronscale\\.io/secrets-revision}");
    const before = await podRevisions();
    expect(before).toHaveLength(1);
    expect(before[0]).toMatch(/^mail@\d+$/);
    await kubectl(["apply", "-f", "-"], {
      namespace: ns.name,
      input: JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "mail" },
        stringData: { password: "rotated-smtp-password" },
      }),
    });
    await waitFor(
      async () => {
        const now = await podRevisions();
        return now.length === 1 && now[0] !== before[0] ? now : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: "the app pod of the rotated Secret" },
    );
    expect((await waitPhase(ns.name, NAME, "Running", 120_000)).status?.healthCheck?.status).toBe("Healthy");
  }, 240_000);
});
