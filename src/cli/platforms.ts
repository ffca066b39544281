import { checkTarget, windowText } from "../api/restore-target.ts";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformBackup } from "../api/v1alpha1/scaleplatformbackup.ts";
import type { ScalePlatformRestore, ScalePlatformRestoreSpec } from "../api/v1alpha1/scaleplatformrestore.ts";
import { restorePrefix, wallToInstant, zoneOf } from "../dashboard/restore-model.ts";
import type { KubeObject } from "../runtime/types.ts";
import {
  type CliIO,
  connect,
  guarded,
  KUBE_USAGE,
  type Kube,
  parseCommand,
  pollUntil,
  printData,
} from "./common.ts";
import { parseDuration } from "./tasks.ts";

// `cronscale backup|restore <platform>`: the objects the dashboard creates, as the kubeconfig's
// user. A manual backup is a ScalePlatformBackup named by the API server (`<platform>-manual-…`);
// a restore is a ScalePlatformRestore (`<platform>-restore-…`) whose target is first checked
// against the platform's recoverable window with the operator's own rule, then sent as a
// server-side dry run (admission and CEL rules) before it is created.

const BACKUP_USAGE = `usage: cronscale backup <platform> [-n ns] [--type full|incr] [--wait [--timeout 1h]] [-o json|yaml]

Takes a manual backup of the platform now (a ScalePlatformBackup, as the dashboard's Back up now).
With --wait, waits until it has Succeeded (exit 0) or Failed (exit 1).

      --type        full (default) or incr (changes since the last backup)
      --wait        wait for the backup to finish
      --timeout     longest wait (default 1h; 30s, 10m, 1h)
${KUBE_USAGE}`;

const RESTORE_USAGE = `usage: cronscale restore <platform> (--latest | --backup LABEL | --time TIME) [-n ns] [--dry-run] [--wait] [-o json|yaml]

Restores the platform's database (a ScalePlatformRestore, as the dashboard's Recovery): to the
latest archived state, to the end of one backup, or to a point in time. The target is checked
against the platform's recoverable window first; without one, the window and the recent backups
are printed.

      --latest      the latest archived state
      --backup      a pgBackRest backup label, e.g. 20261123-010002F (see the list without a target)
      --time        RFC 3339 (2026-11-23T14:05:00Z, or with an offset), or a wall-clock time
                    2026-11-23T14:05[:30] in the platform's timezone (spec.localization.timezone)
      --dry-run     check the target and the object with the API server; create nothing
      --wait        wait until the restore has Succeeded (exit 0) or Failed (exit 1)
      --timeout     longest wait (default 1h)
${KUBE_USAGE}`;

const kindPath = (k: Kube, kind: string, name?: string) =>
  k.transport.path({ apiVersion: API_VERSION, kind }, k.namespace, name);

async function waitPhase<T extends KubeObject & { status?: { phase?: string; message?: string } }>(
  k: Kube,
  kind: string,
  name: string,
  ms: number,
): Promise<T | undefined> {
  return pollUntil(
    async () => {
      const obj = await k.client.get<T>(API_VERSION, kind, k.namespace, name);
      return obj?.status?.phase === "Succeeded" || obj?.status?.phase === "Failed" ? obj : undefined;
    },
    ms,
    2000,
  );
}

/** Reads --timeout (default 1 h); undefined after printing a usage error. */
function timeoutOf(values: Record<string, unknown>, io: CliIO): number | undefined {
  const text = values.timeout as string | undefined;
  const ms = text === undefined ? 3_600_000 : parseDuration(text);
  if (ms === undefined) io.err(`error: --timeout must be a duration such as 30s, 10m or 1h, got "${text}"`);
  return ms;
}

/** Waits when asked, prints the object, and exits by its phase (0 unless it Failed). */
async function finish<T extends KubeObject & { status?: { phase?: string; message?: string } }>(
  io: CliIO,
  k: Kube,
  p: { values: Record<string, unknown>; output: "table" | "json" | "yaml" },
  kind: string,
  created: T,
  ms: number,
  what: string,
): Promise<number> {
  const name = created.metadata.name ?? "";
  const resource = `${kind.toLowerCase()}/${name}`;
  if (!p.values.wait) {
    if (!printData(io, p.output, created)) io.out(`${resource} created (${what})`);
    return 0;
  }
  io.err(`${resource} created (${what}); waiting for it to finish`);
  const done = await waitPhase<T>(k, kind, name, ms);
  if (!done) {
    io.err(`error: ${resource} did not finish within ${Math.round(ms / 1000)} s`);
    return 1;
  }
  if (!printData(io, p.output, done))
    io.out(`${resource} ${done.status?.phase}${done.status?.message ? `: ${done.status.message}` : ""}`);
  return done.status?.phase === "Succeeded" ? 0 : 1;
}

export async function backupCommand(argv: string[], io: CliIO, env: NodeJS.ProcessEnv = process.env) {
  const p = parseCommand(
    argv,
    io,
    BACKUP_USAGE,
    { type: { type: "string" }, wait: { type: "boolean" }, timeout: { type: "string" } },
    { min: 1, max: 1, what: "the platform's name" },
  );
  if (typeof p === "number") return p;
  const type = (p.values.type as string | undefined) ?? "full";
  if (type !== "full" && type !== "incr") {
    io.err(`error: --type must be full or incr, got "${type}"`);
    return 2;
  }
  const ms = timeoutOf(p.values, io);
  if (ms === undefined) return 2;
  const platform = p.positionals[0] ?? "";
  return guarded(io, async () => {
    const k = connect(p.values, env);
    const created = await k.transport.request<ScalePlatformBackup>(
      "POST",
      await kindPath(k, "ScalePlatformBackup"),
      {
        body: {
          apiVersion: API_VERSION,
          kind: "ScalePlatformBackup",
          metadata: { generateName: `${platform}-manual-`, namespace: k.namespace },
          spec: { platformName: platform, type },
        },
      },
    );
    return finish(io, k, p, "ScalePlatformBackup", created, ms, `${type} backup of ${platform}`);
  });
}

/** The restore's spec from the flags, checked against the platform's window; or why not. */
export function restoreSpec(
  flags: { latest?: boolean; backup?: string; time?: string },
  platform: ScalePlatform,
  now: Date,
): { spec: ScalePlatformRestoreSpec; target: string } | { error: string } {
  const chosen = [flags.latest, flags.backup, flags.time].filter((f) => f !== undefined && f !== false);
  if (chosen.length !== 1) return { error: "choose one target: --latest, --backup LABEL or --time TIME" };
  const spec = { platformName: platform.metadata.name ?? "" } as ScalePlatformRestoreSpec;
  let target = "the latest state";
  if (flags.backup !== undefined) {
    spec.backupLabel = flags.backup;
    target = `backup ${flags.backup}`;
  } else if (flags.time !== undefined) {
    // With an offset (or Z) it is an instant; without, a wall-clock time of the platform's zone.
    const instant = /(Z|[+-]\d{2}:\d{2})$/i.test(flags.time)
      ? new Date(Date.parse(flags.time))
      : wallToInstant(flags.time, zoneOf(platform));
    if (!instant || Number.isNaN(instant.getTime()))
      return {
        error: `--time must be RFC 3339 (2026-11-23T14:05:00Z) or a wall-clock time in ${zoneOf(platform)} (2026-11-23T14:05), got "${flags.time}"`,
      };
    spec.targetTime = instant.toISOString().replace(/\.\d{3}Z$/, "Z");
    target = `time ${spec.targetTime}`;
  }
  const checked = checkTarget(spec, platform.status?.backup, now);
  if (!checked.ok) return { error: `${checked.message} (recoverable window: ${checked.window})` };
  return { spec, target };
}

export async function restoreCommand(argv: string[], io: CliIO, env: NodeJS.ProcessEnv = process.env) {
  const p = parseCommand(
    argv,
    io,
    RESTORE_USAGE,
    {
      latest: { type: "boolean" },
      backup: { type: "string" },
      time: { type: "string" },
      "dry-run": { type: "boolean" },
      wait: { type: "boolean" },
      timeout: { type: "string" },
    },
    { min: 1, max: 1, what: "the platform's name" },
  );
  if (typeof p === "number") return p;
  const ms = timeoutOf(p.values, io);
  if (ms === undefined) return 2;
  const name = p.positionals[0] ?? "";
  return guarded(io, async () => {
    const k = connect(p.values, env);
    const platform = await k.client.get<ScalePlatform>(API_VERSION, "ScalePlatform", k.namespace, name);
    if (!platform) {
      io.err(`error: scaleplatform ${name} not found in namespace ${k.namespace}`);
      return 1;
    }
    const flags = p.values as { latest?: boolean; backup?: string; time?: string };
    const planned = restoreSpec(flags, platform, io.now());
    if ("error" in planned) {
      io.err(`error: ${planned.error}`);
      const backup = platform.status?.backup;
      io.err(`recoverable window: ${windowText(backup, io.now())}`);
      const labels = (backup?.recentBackups ?? []).map((b) => b.label);
      if (labels.length > 0) io.err(`recent backups: ${labels.join(", ")}`);
      return flags.latest || flags.backup || flags.time ? 1 : 2;
    }
    const body = {
      apiVersion: API_VERSION,
      kind: "ScalePlatformRestore",
      metadata: { generateName: restorePrefix(name), namespace: k.namespace },
      spec: planned.spec,
    };
    const path = await kindPath(k, "ScalePlatformRestore");
    const dry = await k.transport.request<ScalePlatformRestore>("POST", path, {
      body,
      query: { dryRun: "All" },
    });
    if (p.values["dry-run"]) {
      if (!printData(io, p.output, dry))
        io.out(`scaleplatformrestore of ${name} to ${planned.target} is valid (dry run)`);
      return 0;
    }
    const created = await k.transport.request<ScalePlatformRestore>("POST", path, { body });
    return finish(io, k, p, "ScalePlatformRestore", created, ms, `restore of ${name} to ${planned.target}`);
  });
}
