import { beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import { apply, installCrds, loadYaml, variant } from "./support.ts";

// Admission of ScalePlatform against the real apiserver: the generated CRD's OpenAPI schema and
// CEL rules reject bad input at `kubectl apply`, with the offending field named.

// biome-ignore lint/suspicious/noExplicitAny: manifests are free-form YAML in these tables
type Manifest = any;

const ns = useNamespace("splat-adm");
const sample: Manifest = loadYaml("manifests/samples/scaleplatform.yaml");

/** A minimal valid platform; each invalid case changes one thing. */
function minimal(name = "shop"): Manifest {
  return {
    apiVersion: "cronscale.io/v1alpha1",
    kind: "ScalePlatform",
    metadata: { name },
    spec: { plan: "Standard", domains: { platform: "shop.example.test" } },
  };
}

const withSpec = (mutate: (spec: Manifest) => void, base: Manifest = minimal()) =>
  variant(base, (o: Manifest) => mutate(o.spec));

/** [case, manifest, field named in the error, phrase of the rule]. */
const INVALID: [string, Manifest, string, RegExp][] = [
  [
    "disableBackups together with spec.backup",
    withSpec((s) => {
      s.disableBackups = true;
      s.backup = { repository: { volume: { claimName: "backups" } } };
    }),
    "spec.disableBackups",
    /cannot be true while spec.backup is set/,
  ],
  ["plan missing", withSpec((s) => delete s.plan), "spec.plan", /Required value/],
  ["plan not in the enum", withSpec((s) => (s.plan = "Basic")), "spec.plan", /Unsupported value: "Basic"/],
  [
    "Custom without resources",
    withSpec((s) => (s.plan = "Custom")),
    "spec.resources",
    /required when plan is Custom/,
  ],
  [
    "resources with a fixed plan",
    withSpec((s) => (s.resources = { cpu: "4", memory: "8Gi", storage: "100Gi" })),
    "spec.resources",
    /only allowed with plan Custom/,
  ],
  [
    "Custom cpu not a quantity",
    withSpec((s) => {
      s.plan = "Custom";
      s.resources = { cpu: "lots", memory: "8Gi", storage: "100Gi" };
    }),
    "spec.resources.cpu",
    /should match|must be a quantity/,
  ],
  [
    "Custom minReplicas above maxReplicas",
    withSpec((s) => {
      s.plan = "Custom";
      s.resources = { cpu: "8", memory: "16Gi", storage: "100Gi", minReplicas: 5, maxReplicas: 2 };
    }),
    "spec.resources.minReplicas",
    /must not exceed maxReplicas/,
  ],
  [
    "platform host with capitals",
    withSpec((s) => (s.domains.platform = "Shop.Example.com")),
    "spec.domains.platform",
    /should match/,
  ],
  [
    "platform host of one label",
    withSpec((s) => (s.domains.platform = "localhost")),
    "spec.domains.platform",
    /should match/,
  ],
  [
    "admin host with a port",
    withSpec((s) => (s.domains.admin = "admin.example.test:8443")),
    "spec.domains.admin",
    /should match/,
  ],
  [
    "admin host equal to platform host",
    withSpec((s) => (s.domains.admin = "shop.example.test")),
    "spec.domains",
    /must differ/,
  ],
  ["domains missing", withSpec((s) => delete s.domains), "spec.domains", /Required value/],
  [
    "TLS with issuer and secret",
    withSpec((s) => (s.tls = { issuerRef: { name: "ca" }, secretName: "shop-tls" })),
    "spec.tls",
    /exactly one of issuerRef or secretName/,
  ],
  ["TLS with neither", withSpec((s) => (s.tls = {})), "spec.tls", /exactly one of issuerRef or secretName/],
  [
    "TLS issuer of unknown kind",
    withSpec((s) => (s.tls = { issuerRef: { name: "ca", kind: "Vault" } })),
    "spec.tls.issuerRef.kind",
    /Unsupported value/,
  ],
  [
    "unknown webhook event",
    withSpec(
      (s) => (s.webhooks = [{ name: "w", url: "https://h.example.test/x", events: ["OrderDeleted"] }]),
    ),
    "spec.webhooks[0].events[0]",
    /Unsupported value: "OrderDeleted"/,
  ],
  [
    "webhook without events",
    withSpec((s) => (s.webhooks = [{ name: "w", url: "https://h.example.test/x", events: [] }])),
    "spec.webhooks[0].events",
    /should have at least 1 items/,
  ],
  [
    "webhook URL not http(s)",
    withSpec((s) => (s.webhooks = [{ name: "w", url: "ftp://h.example.test/x", events: ["OrderCreated"] }])),
    "spec.webhooks[0].url",
    /should match/,
  ],
  [
    "duplicate webhook names",
    withSpec(
      (s) =>
        (s.webhooks = [
          { name: "w", url: "https://a.example.test/", events: ["OrderCreated"] },
          { name: "w", url: "https://b.example.test/", events: ["InventoryLow"] },
        ]),
    ),
    "spec.webhooks[1]",
    /Duplicate value/,
  ],
  [
    "SMTP user without password reference",
    withSpec(
      (s) =>
        (s.email = { smtp: { host: "smtp.example.test", username: "u" }, fromAddress: "a@example.test" }),
    ),
    "spec.email.smtp.passwordSecretRef",
    /required when username is set/,
  ],
  [
    "SMTP port out of range",
    withSpec(
      (s) => (s.email = { smtp: { host: "smtp.example.test", port: 70000 }, fromAddress: "a@example.test" }),
    ),
    "spec.email.smtp.port",
    /less than or equal to 65535/,
  ],
  [
    "store contact email invalid",
    withSpec((s) => (s.store = { name: "S", contactEmail: "not-an-email" })),
    "spec.store.contactEmail",
    /email/,
  ],
  [
    "currency not ISO 4217",
    withSpec((s) => (s.localization = { currency: "euro" })),
    "spec.localization.currency",
    /Too long: may not be more than 3 bytes/,
  ],
  [
    "currency in lowercase",
    withSpec((s) => (s.localization = { currency: "eur" })),
    "spec.localization.currency",
    /should match/,
  ],
  [
    "shipping zone not a country code",
    withSpec(
      (s) =>
        (s.shippingMethods = [
          { name: "std", carrier: "dhl", zones: ["Germany"], rate: { calculation: "Carrier" } },
        ]),
    ),
    "spec.shippingMethods[0].zones[0]",
    /Too long: may not be more than 2 bytes/,
  ],
  [
    "flat shipping rate without amount",
    withSpec(
      (s) =>
        (s.shippingMethods = [{ name: "std", carrier: "dhl", zones: ["DE"], rate: { calculation: "Flat" } }]),
    ),
    "spec.shippingMethods[0].rate.amount",
    /amount is required/,
  ],
  [
    "payment gateway of unknown type",
    withSpec((s) => (s.paymentGateways = [{ name: "p", type: "Cash", provider: "test" }])),
    "spec.paymentGateways[0].type",
    /Unsupported value/,
  ],
  [
    "payment provider the app does not serve",
    withSpec((s) => (s.paymentGateways = [{ name: "p", type: "Card", provider: "paypal" }])),
    "spec.paymentGateways[0].provider",
    /Unsupported value/,
  ],
  [
    "bank transfer through stripe",
    withSpec(
      (s) =>
        (s.paymentGateways = [
          { name: "p", type: "BankTransfer", provider: "stripe", credentialsSecretRef: { name: "k" } },
        ]),
    ),
    "spec.paymentGateways[0].type",
    /provider stripe serves type Card and Wallet/,
  ],
  [
    "admin allow-list entry not a CIDR",
    withSpec((s) => (s.security = { adminAllowedCIDRs: ["203.0.113.0/24", "999.1.2.3/8"] })),
    "spec.security.adminAllowedCIDRs[1]",
    /must be a CIDR/,
  ],
  ["stopped not a boolean", withSpec((s) => (s.stopped = "sometimes")), "spec.stopped", /boolean/],
  ["unknown spec field", withSpec((s) => (s.replicas = 3)), "spec.replicas", /unknown field/],
  ["name longer than 40", minimal("a".repeat(41)), "metadata.name", /at most 40 characters/],
  ["name starting with a digit", minimal("1shop"), "metadata.name", /starting with a letter/],
];

beforeAll(async () => {
  await installCrds();
}, 120_000);

describe("ScalePlatform admission", () => {
  it("accepts the sample and the minimal platform (server-side dry run)", async () => {
    for (const m of [sample, minimal()]) {
      const r = await apply(m, ns.name, true);
      expect(r.message).toMatch(/created \(server dry run\)/);
    }
  });

  it(`has at least 15 invalid manifests in its table (${INVALID.length})`, () => {
    expect(INVALID.length).toBeGreaterThanOrEqual(15);
  });

  it.each(INVALID)("rejects %s, naming the field", async (_case, manifest, field, rule) => {
    const r = await apply(manifest, ns.name, true);
    expect(r.ok, r.message).toBe(false);
    expect(r.message).toContain(field);
    expect(r.message).toMatch(rule);
  });
});

describe("ScalePlatform update rules (transition CEL on stored objects)", () => {
  it("allows Standard → Professional → Enterprise → Custom, then refuses a downgrade", async () => {
    const name = "tiers";
    const base = minimal(name);
    expect((await apply(base, ns.name)).ok).toBe(true);
    for (const plan of ["Professional", "Enterprise"]) {
      const r = await apply(
        withSpec((s) => (s.plan = plan), base),
        ns.name,
      );
      expect(r.ok, r.message).toBe(true);
    }
    const custom = withSpec((s) => {
      s.plan = "Custom";
      s.resources = { cpu: "24", memory: "48Gi", storage: "1Ti" };
    }, base);
    expect((await apply(custom, ns.name)).message).toMatch(/configured/);

    const down = await apply(
      withSpec((s) => (s.plan = "Enterprise"), base),
      ns.name,
    );
    expect(down.ok).toBe(false);
    expect(down.message).toContain("spec.plan");
    expect(down.message).toMatch(/cannot change plan from Custom to Enterprise: only upgrades/);

    const shrink = await apply(
      withSpec((s) => (s.resources.storage = "500Gi"), custom),
      ns.name,
    );
    expect(shrink.ok).toBe(false);
    expect(shrink.message).toContain("spec.resources.storage");
    expect(shrink.message).toMatch(/storage cannot shrink from 1Ti to 500Gi/);
  });

  it("refuses Professional → Standard with the field and both plans named", async () => {
    const base = withSpec((s) => (s.plan = "Professional"), minimal("downgrade"));
    expect((await apply(base, ns.name)).ok).toBe(true);
    const r = await apply(
      withSpec((s) => (s.plan = "Standard"), base),
      ns.name,
    );
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/spec\.plan: Forbidden: cannot change plan from Professional to Standard/);
    const live = await kubectl(["get", "splat", "downgrade", "-o", "jsonpath={.spec.plan}"], {
      namespace: ns.name,
    });
    expect(live.stdout).toBe("Professional");
  });

  it("refuses a move to Custom below the current plan, and Custom shrinking CPU or memory", async () => {
    const base = withSpec((s) => (s.plan = "Enterprise"), minimal("via-custom"));
    expect((await apply(base, ns.name)).ok).toBe(true);
    const toCustom = (r: Manifest) =>
      withSpec((s) => {
        s.plan = "Custom";
        s.resources = r;
      }, base);
    const full = { cpu: "16", memory: "32Gi", storage: "500Gi" };
    for (const [field, smaller, planValue] of [
      ["cpu", "2", "16"],
      ["memory", "4Gi", "32Gi"],
      ["storage", "100Gi", "500Gi"],
    ] as const) {
      const r = await apply(toCustom({ ...full, [field]: smaller }), ns.name);
      expect(r.ok, r.message).toBe(false);
      expect(r.message).toContain(`spec.resources.${field}`);
      expect(r.message).toContain(
        `cannot change plan from Enterprise to Custom with ${field} ${smaller}: below the ${planValue} of Enterprise`,
      );
    }
    // Exactly the plan's allocation, written in other units, is not less.
    const same = toCustom({ cpu: "16000m", memory: "32768Mi", storage: "500Gi" });
    expect((await apply(same, ns.name)).message).toMatch(/configured/);
    for (const [field, smaller] of [
      ["cpu", "8"],
      ["memory", "16Gi"],
    ] as const) {
      const r = await apply(
        withSpec((s) => (s.resources[field] = smaller), same),
        ns.name,
      );
      expect(r.ok, r.message).toBe(false);
      expect(r.message).toContain(`spec.resources.${field}`);
      expect(r.message).toMatch(new RegExp(`${field} cannot shrink from \\S+ to ${smaller}`));
    }
    const grow = withSpec((s) => (s.resources = { ...full, cpu: "20", memory: "40Gi" }), same);
    expect((await apply(grow, ns.name)).message).toMatch(/configured/);
  });

  it("shows PLAN, STATUS, STEP, URL, BACKUPS, LAST BACKUP and AGE in kubectl get", async () => {
    const r = await kubectl(["get", "splat", "downgrade"], { namespace: ns.name });
    expect(r.stdout.split("\n")[0]).toMatch(
      /^NAME\s+PLAN\s+STATUS\s+STEP\s+URL\s+BACKUPS\s+LAST BACKUP\s+AGE/,
    );
    expect(r.stdout).toMatch(/downgrade\s+Professional/);
  });
});
