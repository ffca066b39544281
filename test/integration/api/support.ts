import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";
import { kubectl, waitFor } from "../../support/cluster.ts";

/** Repository root (with trailing slash). */
export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

/** Installs the generated CRDs (server-side apply, as `make run` does) and waits until Established. */
export async function installCrds(): Promise<void> {
  await kubectl(["apply", "--server-side", "--force-conflicts", "-f", `${repoRoot}crds/`]);
  await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "-f", `${repoRoot}crds/`], {
    timeoutMs: 90_000,
  });
  // Discovery may lag Established by a moment; kubectl explain needs it.
  await waitFor(
    async () =>
      (await kubectl(["api-resources", "--api-group=cronscale.io"])).stdout.includes("scaleplatforms"),
    { what: "cronscale.io in discovery", timeoutMs: 30_000 },
  );
}

/** Parsed YAML of a file under the repository. */
export function loadYaml<T = Record<string, unknown>>(rel: string): T {
  return parse(readFileSync(`${repoRoot}${rel}`, "utf8")) as T;
}

/** Result of an apply: exit code and the apiserver's message. */
export interface ApplyOutcome {
  ok: boolean;
  message: string;
}

/** `kubectl apply` of one object, optionally as a server-side dry run. */
export async function apply(obj: unknown, namespace: string, dryRun = false): Promise<ApplyOutcome> {
  const args = ["apply", "-f", "-", ...(dryRun ? ["--dry-run=server"] : [])];
  const r = await kubectl(args, { namespace, input: stringify(obj), allowFailure: true });
  return { ok: r.code === 0, message: `${r.stdout}${r.stderr}`.trim() };
}

/** A deep copy of `base` with `mutate` applied. */
export function variant<T>(base: T, mutate: (o: T) => void): T {
  const copy = structuredClone(base);
  mutate(copy);
  return copy;
}
