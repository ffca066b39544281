// Secrets of the execution archive that the operator makes itself at start when they are missing:
// the bundled PostgreSQL's password (with the DSN the operator connects by) and the history
// endpoint's certificate. The chart renders neither, so `helm template` gives the same output
// every time and a GitOps tool that renders without cluster access never replaces them.
//
// Each is made once and never updated, and belongs to no Helm release: it survives upgrades and
// `helm uninstall`, so a kept archive volume and the password in its Secret always agree, and a CA
// file a user saved stays valid. Replicas racing at start agree: the first create wins (409 for
// the others, who read the winner's).

import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { KubeClient } from "../runtime/client.ts";
import { errorMessage, isConflict } from "../runtime/errors.ts";
import type { KubeObject } from "../runtime/types.ts";
import { issueServingTls } from "../runtime/x509.ts";

/** The user and database of the bundled PostgreSQL (the chart's archive StatefulSet). */
export const ARCHIVE_USER = "cronscale";
export const ARCHIVE_DATABASE = "cronscale";

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

const LABELS = {
  "app.kubernetes.io/part-of": "cronscale",
  "app.kubernetes.io/managed-by": "cronscale-operator",
};

function decode(s: Secret | undefined, key: string): string | undefined {
  const v = s?.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, "base64").toString("utf8");
}

function encode(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Buffer.from(v).toString("base64")]));
}

/** The Secret if it exists, else `make()`'s, created; a concurrent creator's when it wins. */
async function getOrCreate(
  client: KubeClient,
  namespace: string,
  name: string,
  make: () => Secret,
  log: Logger,
): Promise<Secret> {
  const have = await client.get<Secret>("v1", "Secret", namespace, name);
  if (have) return have;
  try {
    const made = await client.create<Secret>(make());
    log.info({ secret: `${namespace}/${name}` }, "secret generated (kept across upgrades and uninstall)");
    return made;
  } catch (err) {
    if (!isConflict(err)) throw err;
    const won = await client.get<Secret>("v1", "Secret", namespace, name);
    if (!won) throw err;
    return won;
  }
}

/** postgres://user:password@host:5432/database with user and password URL-encoded. */
export function archiveDsn(host: string, password: string): string {
  return `postgres://${encodeURIComponent(ARCHIVE_USER)}:${encodeURIComponent(password)}@${host}:5432/${ARCHIVE_DATABASE}`;
}

/**
 * The DSN of the bundled PostgreSQL from Secret `name` (keys `password` and, when present, `dsn`),
 * made with a new random password when the Secret does not exist. A Secret the user made with a
 * `password` only gets its DSN built from `host`; it is never written to.
 */
export async function ensureArchiveSecret(
  client: KubeClient,
  o: { namespace: string; name: string; host: string; log: Logger },
): Promise<string> {
  const secret = await getOrCreate(
    client,
    o.namespace,
    o.name,
    () => {
      // 32 characters of base64url: letters, digits, - and _, safe in a URL without encoding.
      const password = randomBytes(24).toString("base64url");
      return {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: o.name,
          namespace: o.namespace,
          labels: { ...LABELS, "app.kubernetes.io/component": "archive" },
          annotations: {
            "cronscale.io/generated":
              "the archive database's password; never changed once made. Delete it only together with the archive's volume.",
          },
        },
        type: "Opaque",
        data: encode({
          user: ARCHIVE_USER,
          password,
          database: ARCHIVE_DATABASE,
          dsn: archiveDsn(o.host, password),
        }),
      };
    },
    o.log,
  );
  const dsn = decode(secret, "dsn");
  if (dsn) return dsn;
  const password = decode(secret, "password");
  if (!password)
    throw new Error(`Secret ${o.namespace}/${o.name} has neither a dsn nor a password key for the archive`);
  return archiveDsn(o.host, password);
}

/**
 * Certificate and key of the history endpoint from kubernetes.io/tls Secret `name`, made when it
 * does not exist: a CA (its certificate in `ca.crt` for clients' --ca-file; its key discarded) and
 * a certificate it signs for `dnsNames`, 127.0.0.1 and ::1 (kubectl port-forward), valid 10 years.
 * To renew, delete the Secret and restart the operator (clients fetch the new ca.crt).
 */
export async function ensureHistoryTlsSecret(
  client: KubeClient,
  o: { namespace: string; name: string; dnsNames: readonly string[]; log: Logger },
): Promise<{ cert: string; key: string; ca?: string }> {
  const secret = await getOrCreate(
    client,
    o.namespace,
    o.name,
    () => {
      const tls = issueServingTls({
        caName: `${o.name} CA`,
        commonName: o.dnsNames[0] ?? "localhost",
        dnsNames: o.dnsNames,
        ipAddresses: ["127.0.0.1", "::1"],
        days: 3650,
      });
      return {
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name: o.name,
          namespace: o.namespace,
          labels: { ...LABELS, "app.kubernetes.io/component": "history" },
        },
        type: "kubernetes.io/tls",
        data: encode({ "tls.crt": tls.cert, "tls.key": tls.key, "ca.crt": tls.ca }),
      };
    },
    o.log,
  );
  const cert = decode(secret, "tls.crt");
  const key = decode(secret, "tls.key");
  if (!cert || !key) throw new Error(`Secret ${o.namespace}/${o.name} lacks tls.crt or tls.key`);
  const ca = decode(secret, "ca.crt");
  return { cert, key, ...(ca && { ca }) };
}

/** Runs `f` until it succeeds, up to `attempts` times with doubling pauses (API server not up yet). */
export async function withRetries<T>(
  what: string,
  f: () => Promise<T>,
  log: Logger,
  attempts = 7,
  firstPauseMs = 1000,
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await f();
    } catch (err) {
      if (i >= attempts) throw err;
      const pause = firstPauseMs * 2 ** (i - 1);
      log.warn({ err: errorMessage(err), attempt: i, retryInMs: pause }, `${what} failed; retrying`);
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
