import { platformCredentialsSecretName, platformDatabaseSecretName } from "../../../api/v1alpha1/names.ts";
import type { KubeObject } from "../../../runtime/types.ts";
import { childMeta, type PlatformInputs } from "./common.ts";

// The two generated Secrets. Their values are random, so they are made once: the reconciler
// creates a Secret only when it does not exist (with randomness it injects) and never rewrites its
// data, which keeps credentials stable across reconciles and operator restarts. Pure.

/** Source of random characters (crypto-backed in the reconciler, seeded in tests). */
export type RandomString = (length: number) => string;

/** Keys of the platform credentials Secret. */
export const CREDENTIAL_KEYS = {
  adminUser: "admin-username",
  adminPassword: "admin-password",
  apiKey: "api-key",
} as const;

/** Keys of the database credentials Secret. */
export const DB_KEYS = { user: "username", password: "password", database: "database" } as const;

/** Database user and database name (fixed; only the password is secret). */
export const DB_USER = "commerce";
export const DB_NAME = "commerce";

/** The admin login and API key Secret, filled from `random` (call only when it does not exist). */
export function newCredentialsSecret(inp: PlatformInputs, random: RandomString): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: childMeta(inp, platformCredentialsSecretName(inp.platform.metadata.name ?? "")),
    type: "Opaque",
    stringData: {
      [CREDENTIAL_KEYS.adminUser]: "admin",
      [CREDENTIAL_KEYS.adminPassword]: random(24),
      // Prefixed so a leaked key is recognisable (secret scanners, log masking).
      [CREDENTIAL_KEYS.apiKey]: `csk_${random(40)}`,
    },
  };
}

/** The database user's Secret (alphanumeric password: it is embedded in DATABASE_URL). */
export function newDatabaseSecret(inp: PlatformInputs, random: RandomString): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: childMeta(inp, platformDatabaseSecretName(inp.platform.metadata.name ?? ""), "database"),
    type: "Opaque",
    stringData: { [DB_KEYS.user]: DB_USER, [DB_KEYS.password]: random(32), [DB_KEYS.database]: DB_NAME },
  };
}
