import { type DestinationStream, type Logger, pino } from "pino";

/** Values that must never appear in logs (secret env values and the like), masked on output. */
const secretValues = new Set<string>();

/** Field paths whose values are always redacted, wherever they appear one level down. */
export const REDACT_PATHS = [
  "*.password",
  "*.token",
  "*.secret",
  "*.stringData",
  "*.authorization",
  "*.headers.authorization",
];

/** Registers a secret value so any log line that contains it shows "[REDACTED]" instead. */
export function registerSecretValue(value: string): void {
  // Very short values would mask unrelated text everywhere; they are not secrets worth the damage.
  if (value.length >= 4) secretValues.add(value);
}

/** Forgets registered secret values (tests). */
export function clearSecretValues(): void {
  secretValues.clear();
}

/** Replaces every registered secret value in `text`. */
export function redactSecrets(text: string): string {
  if (secretValues.size === 0) return text;
  let out = text;
  for (const v of secretValues) {
    // Values are matched as they appear in JSON output (quotes and backslashes escaped).
    const encoded = JSON.stringify(v).slice(1, -1);
    out = out.split(encoded).join("[REDACTED]");
  }
  return out;
}

/** Options of the root logger. */
export interface LoggerOptions {
  level?: string;
  /** Where lines go (stdout by default); tests pass a buffer. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
}

/** The root pino JSON logger: fixed messages plus fields, secret values masked. */
export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? "info",
      base: opts.base ?? { app: "cronscale" },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: "[REDACTED]" },
      hooks: { streamWrite: redactSecrets },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A logger that writes nothing (unit tests). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/** Child logger for one controller. */
export function controllerLogger(root: Logger, controller: string): Logger {
  return root.child({ controller });
}

/** Child logger for one reconcile: every line carries the reconcile id and the object key. */
export function reconcileLogger(
  controllerLog: Logger,
  reconcileId: string,
  namespace: string,
  name: string,
): Logger {
  return controllerLog.child({ reconcileId, namespace, name });
}
