import { platformAppName, platformTlsName } from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { APP_SERVICE_PORT } from "./app.ts";
import { childMeta, nameOf, type PlatformInputs } from "./common.ts";
import { edgeAnnotations } from "./edge.ts";

// The Ingress (platform, admin and API hosts → the app Service) and, with cert-manager, the
// Certificate whose Secret the Ingress serves. Pure.

/** The TLS Secret the Ingress serves: the given one, or the one the Certificate writes. */
export function tlsSecretName(inp: PlatformInputs): string {
  return inp.spec.tls?.secretName ?? platformTlsName(nameOf(inp));
}

/** The issuer of the Certificate: spec.tls.issuerRef, else the operator's default (if any). */
export function issuerOf(inp: PlatformInputs): { name: string; kind: string } | undefined {
  if (inp.spec.tls?.issuerRef) return inp.spec.tls.issuerRef;
  if (inp.spec.tls?.secretName) return undefined;
  return inp.config.defaultIssuer.name ? inp.config.defaultIssuer : undefined;
}

/**
 * Whether the platform is served over TLS: a given Secret, or a Certificate cert-manager will
 * issue — which needs both cert-manager and an issuer. Without an issuer nothing signs a
 * certificate, the Ingress lists no TLS and the URLs say http.
 */
export function tlsExpected(inp: PlatformInputs): boolean {
  return inp.spec.tls?.secretName !== undefined || (inp.features.certManager && issuerOf(inp) !== undefined);
}

/** The Ingress. TLS is listed only when a certificate is (or will be) there. */
export function desiredIngress(inp: PlatformInputs): KubeObject {
  const hosts = [inp.hosts.platform, inp.hosts.admin, inp.hosts.api];
  const backend = { service: { name: platformAppName(nameOf(inp)), port: { number: APP_SERVICE_PORT } } };
  const withTls = tlsExpected(inp);
  const meta = childMeta(inp, platformAppName(nameOf(inp)), "app");
  const annotations = edgeAnnotations(inp);
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: Object.keys(annotations).length > 0 ? { ...meta, annotations } : meta,
    spec: {
      ...(inp.spec.ingressClassName ? { ingressClassName: inp.spec.ingressClassName } : {}),
      ...(withTls ? { tls: [{ hosts, secretName: tlsSecretName(inp) }] } : {}),
      rules: hosts.map((host) => ({
        host,
        http: { paths: [{ path: "/", pathType: "Prefix", backend }] },
      })),
    },
  };
}

/** The cert-manager Certificate, or undefined when cert-manager is absent or a Secret is given. */
export function desiredCertificate(inp: PlatformInputs): KubeObject | undefined {
  const issuer = issuerOf(inp);
  if (!inp.features.certManager || !issuer) return undefined;
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: childMeta(inp, platformTlsName(nameOf(inp)), "app"),
    spec: {
      secretName: platformTlsName(nameOf(inp)),
      dnsNames: [inp.hosts.platform, inp.hosts.admin, inp.hosts.api],
      issuerRef: { name: issuer.name, kind: issuer.kind, group: "cert-manager.io" },
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
    },
  };
}
