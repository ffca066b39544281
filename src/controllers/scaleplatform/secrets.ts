import { PlatformReason } from "../../api/v1alpha1/conditions.ts";
import type { KubeObject, ReconcileContext } from "../../runtime/types.ts";
import type { PlatformInputs } from "./desired/common.ts";
import {
  type SecretFromUse,
  type SecretRefUse,
  secretFromUses,
  secretRefUses,
} from "./desired/secretrefs.ts";

// Whether the user's Secrets the app's env refers to exist. A pod whose secretKeyRef names a
// missing Secret or key never starts (CreateContainerConfigError), so the reconciler checks
// first and holds the app's configuration back instead of rolling out pods that cannot start.

/** One unresolved reference. */
export interface SecretProblem {
  reason: typeof PlatformReason.SecretNotFound | typeof PlatformReason.SecretKeyNotFound;
  /** Names the spec field, the Secret and the key; never a value. */
  message: string;
}

/**
 * Reads every referenced Secret once and reports the references that do not resolve. The
 * user's Secrets carry none of our labels, so the informer cache (which holds only the
 * operator's objects) cannot answer: this is a direct GET, and nothing watches them — the
 * reconciler requeues with backoff while a problem remains.
 */
export async function checkSecretRefs(
  ctx: ReconcileContext,
  namespace: string,
  refs: readonly SecretRefUse[],
  wholeSecrets: readonly SecretFromUse[] = [],
  secrets: Map<string, KubeObject | undefined> = new Map(),
): Promise<SecretProblem[]> {
  const problems: SecretProblem[] = [];
  const read = async (name: string) => {
    if (!secrets.has(name)) secrets.set(name, await ctx.client.get("v1", "Secret", namespace, name));
    return secrets.get(name) as (KubeObject & { data?: Record<string, string> }) | undefined;
  };
  const notFound = (field: string, name: string): SecretProblem => ({
    reason: PlatformReason.SecretNotFound,
    message: `${field}: Secret "${name}" not found in namespace ${namespace}`,
  });
  for (const r of wholeSecrets) {
    if (!(await read(r.name))) problems.push(notFound(r.field, r.name));
  }
  for (const r of refs) {
    const s = await read(r.name);
    if (!s) problems.push(notFound(r.field, r.name));
    else if (s.data?.[r.key] === undefined) {
      problems.push({
        reason: PlatformReason.SecretKeyNotFound,
        message: `${r.field}: Secret "${r.name}" has no key "${r.key}"`,
      });
    }
  }
  return problems;
}

/** One line for conditions and step messages (the first problem's reason leads). */
export function describeProblems(problems: readonly SecretProblem[]): string {
  return problems
    .map((p) => p.message)
    .join("; ")
    .slice(0, 1000);
}

/** The user's Secrets the app's env refers to, as resolved in one pass. */
export interface SecretResolution {
  problems: SecretProblem[];
  /** How many references there are (Secret keys and whole Secrets). */
  refCount: number;
  /** Why the app's configuration is held back; undefined when it is not. */
  held?: string;
  /**
   * `name@resourceVersion` of every referenced Secret, sorted; undefined without references.
   * Goes on the app's pod template so that rotating a Secret rolls the pods.
   */
  revision?: string;
}

/**
 * Resolves every Secret the platform's app refers to. While one is missing its pods could not
 * start, so the app's configuration is held; when stopped no pod starts, so nothing is held.
 */
export async function resolveSecretRefs(
  ctx: ReconcileContext,
  namespace: string,
  inp: PlatformInputs,
): Promise<SecretResolution> {
  const refs = secretRefUses(inp);
  const wholeSecrets = secretFromUses(inp);
  const read = new Map<string, KubeObject | undefined>();
  const problems = await checkSecretRefs(ctx, namespace, refs, wholeSecrets, read);
  const held = problems.length > 0 && !inp.spec.stopped ? describeProblems(problems) : undefined;
  const versions = [...read.entries()]
    .filter(([, s]) => s !== undefined)
    .map(([name, s]) => `${name}@${s?.metadata.resourceVersion ?? ""}`)
    .sort();
  const revision = versions.length > 0 ? versions.join(",") : undefined;
  return { problems, refCount: refs.length + wholeSecrets.length, held, revision };
}
