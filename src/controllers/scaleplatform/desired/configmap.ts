import { PLAN_TABLE } from "../../../api/plans.ts";
import { platformConfigMapName } from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { childMeta, nameOf, type PlatformInputs } from "./common.ts";
import { tlsExpected } from "./ingress.ts";

// The non-secret configuration of the platform (config groups and webhooks, commerce/README.md "Config contract",
// hosts, plan limits and the network allow-lists), as environment variables of the app (envFrom). Groups are JSON so the
// app reads typed values; Secrets appear only as references. Pure.

const json = (v: unknown) => (v === undefined ? "" : JSON.stringify(v));

/** Public URLs of the three hosts. */
export function platformUrls(inp: PlatformInputs): { platform: string; admin: string; api: string } {
  const scheme = tlsExpected(inp) ? "https" : "http";
  return {
    platform: `${scheme}://${inp.hosts.platform}/`,
    admin: `${scheme}://${inp.hosts.admin}/`,
    api: `${scheme}://${inp.hosts.api}/api/v1/`,
  };
}

/** The ConfigMap's data (also hashed onto the pod template). */
export function configData(inp: PlatformInputs): Record<string, string> {
  const s = inp.spec;
  const urls = platformUrls(inp);
  const limits = s.plan === "Custom" ? undefined : PLAN_TABLE[s.plan];
  return {
    PLATFORM_INSTANCE: nameOf(inp),
    PLATFORM_PLAN: s.plan,
    PLATFORM_URL: urls.platform,
    ADMIN_URL: urls.admin,
    API_URL: urls.api,
    PLAN_MAX_PRODUCTS: limits
      ? limits.maxProducts === undefined
        ? "unlimited"
        : String(limits.maxProducts)
      : "by agreement",
    CONFIG_STORE: json(s.store),
    CONFIG_LOCALIZATION: json(s.localization),
    CONFIG_EMAIL: json(s.email),
    CONFIG_PAYMENT_GATEWAYS: json(s.paymentGateways ?? []),
    CONFIG_SHIPPING_METHODS: json(s.shippingMethods ?? []),
    CONFIG_WEBHOOKS: json(s.webhooks ?? []),
    // Private destinations webhooks may reach (the operator's setting: a local cluster allows its
    // node network so receivers on the host work); everything else private stays refused.
    COMMERCE_WEBHOOK_ALLOWED_CIDRS: inp.config.webhookAllowedCidrs.join(","),
    // The admin host's IP allow-list (spec.security); absent means everyone may reach it.
    ...(s.security?.adminAllowedCIDRs?.length
      ? { COMMERCE_ADMIN_ALLOWED_CIDRS: s.security.adminAllowedCIDRs.join(",") }
      : {}),
  };
}

/** The ConfigMap the app reads its configuration from. */
export function desiredConfigMap(inp: PlatformInputs, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: childMeta(inp, platformConfigMapName(nameOf(inp)), "app"),
    data,
  };
}
