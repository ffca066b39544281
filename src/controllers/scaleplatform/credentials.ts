import { randomInt } from "node:crypto";
import { platformCredentialsSecretName, platformDatabaseSecretName } from "../../api/v1alpha1/names.ts";
import { isConflict } from "../../runtime/errors.ts";
import { controlledBy } from "../../runtime/owners.ts";
import type { ObjectKey, ReconcileContext } from "../../runtime/types.ts";
import { readChild } from "./children.ts";
import type { PlatformInputs } from "./desired/common.ts";
import { newCredentialsSecret, newDatabaseSecret, type RandomString } from "./desired/credentials.ts";

// The generated Secrets (database user; admin login and API key): created once with fresh
// randomness and never rewritten, so the passwords the database and the app hold stay valid.

const ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Cryptographically random alphanumeric strings. */
export const cryptoRandom: RandomString = (n) =>
  Array.from({ length: n }, () => ALPHANUM[randomInt(ALPHANUM.length)]).join("");

/**
 * Creates the generated Secrets that do not exist yet. Returns the refusal message when a name
 * is held by a Secret this platform does not control (the ones before it are created already).
 */
export async function ensureCredentials(
  ctx: ReconcileContext,
  cached: ReadonlySet<string>,
  key: ObjectKey,
  inp: PlatformInputs,
  random: RandomString,
): Promise<string | undefined> {
  const ns = key.namespace;
  for (const [name, make] of [
    [platformDatabaseSecretName(key.name), newDatabaseSecret],
    [platformCredentialsSecretName(key.name), newCredentialsSecret],
  ] as const) {
    const live = await readChild(ctx, cached, "v1", "Secret", ns, name);
    if (live && !controlledBy(live, inp.platform.metadata.uid))
      return `Secret ${name} already exists and does not belong to this platform`;
    if (live) continue;
    try {
      await ctx.client.create(make(inp, random));
      ctx.log.info({ platform: key.name, secret: name }, "generated credentials");
    } catch (err) {
      if (!isConflict(err)) throw err; // created meanwhile: keep the existing values
    }
  }
  return undefined;
}
