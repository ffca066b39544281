import { type DestinationStream, type Logger, pino } from "pino";

/*
 * Masking rule for the values of a SecretRegistry (log lines only; captured task output is masked
 * by taskexecution/output.ts, everywhere):
 * - values shorter than MIN_SECRET_LENGTH (4) are never masked: they would hide unrelated text;
 * - values of at least ANYWHERE_SECRET_LENGTH (8) are masked wherever they appear, even inside
 *   longer words: real secrets are long and random, so a hit is almost never an accident;
 * - values in between are masked only as a whole token: not where they are part of a longer
 *   identifier-like token (letters, digits and `_`, joined by `-` or `.`). A secret `hello` is
 *   masked in `hello`, `"hello"`, `PASS=hello`, `https://u:hello@h/`, `... is hello.`, but not in
 *   the task name `hello-bash`, `hello.sh` or `hello_world`.
 * Lines are JSON, so values are matched as JSON encodes them, and an escape before or after a
 * value (`\n`, `\t`, `\u001b`) is a boundary, not a letter of a token.
 */

/** Values shorter than this are never masked. */
export const MIN_SECRET_LENGTH = 4;
/** Values at least this long are masked everywhere, also inside longer words. */
export const ANYWHERE_SECRET_LENGTH = 8;
/** What replaces a secret value in a log line. */
const CENSOR = "[REDACTED]";

/** Field paths whose values are always redacted, wherever they appear one level down. */
export const REDACT_PATHS = [
  "*.password",
  "*.token",
  "*.secret",
  "*.stringData",
  "*.authorization",
  "*.headers.authorization",
];

/**
 * Secret values that must never appear in log lines, grouped by scope (e.g. the task whose
 * output is being captured): a scope's values replace its previous ones and go when the scope is
 * forgotten, so the registry holds only the values in use, never every value ever seen. One
 * registry per logger, injected where values are learnt.
 */
export class SecretRegistry {
  private readonly scopes = new Map<string, ReadonlySet<string>>();
  /** Values as JSON encodes them, longest first (so overlapping values mask fully). */
  private encoded: { encoded: string; anywhere: boolean }[] = [];

  /** Sets the values of `scope` (those shorter than MIN_SECRET_LENGTH are never masked). */
  set(scope: string, values: Iterable<string>): void {
    const kept = new Set([...values].filter((v) => v.length >= MIN_SECRET_LENGTH));
    if (kept.size === 0) this.forget(scope);
    else {
      this.scopes.set(scope, kept);
      this.rebuild();
    }
  }

  /** Drops the values of `scope`. */
  forget(scope: string): void {
    if (this.scopes.delete(scope)) this.rebuild();
  }

  /** Distinct values held. */
  get size(): number {
    return this.encoded.length;
  }

  /** Replaces the held values in a JSON log line (the rule is at the top of this file). */
  redact(text: string): string {
    return redactValues(text, this.encoded);
  }

  private rebuild(): void {
    const all = new Set<string>();
    for (const values of this.scopes.values()) for (const v of values) all.add(v);
    this.encoded = [...all]
      .sort((a, b) => b.length - a.length)
      .map((v) => ({
        encoded: JSON.stringify(v).slice(1, -1),
        anywhere: v.length >= ANYWHERE_SECRET_LENGTH,
      }));
  }
}

const WORD_CHAR = /^[\p{L}\p{N}_]$/u;
const HEX_ESCAPE = /^\\u[0-9a-fA-F]{4}$/;

/** Whether the backslashes right before `text[k]` are odd in number (it is escaped). */
function escaped(text: string, k: number): boolean {
  let n = 0;
  while (text[k - 1 - n] === "\\") n++;
  return n % 2 === 1;
}

/** Whether `text[k]` is a letter, digit or `_` of the decoded text (not part of an escape). */
function isWordAt(text: string, k: number): boolean {
  const c = text[k];
  if (c === undefined || !WORD_CHAR.test(c)) return false;
  if ("nrtbf".includes(c) && escaped(text, k)) return false;
  return !(k >= 5 && HEX_ESCAPE.test(text.slice(k - 5, k + 1)) && escaped(text, k - 4));
}

/** Whether `text[k]` continues a token: a word character, or `-`/`.` joined to one at `next`. */
function continuesToken(text: string, k: number, next: number): boolean {
  const c = text[k];
  return isWordAt(text, k) || ((c === "-" || c === ".") && isWordAt(text, next));
}

/** Whether `text[start, end)` is part of a longer identifier-like token. */
function insideToken(text: string, start: number, end: number): boolean {
  return continuesToken(text, start - 1, start - 2) || continuesToken(text, end, end + 1);
}

function redactValues(text: string, values: readonly { encoded: string; anywhere: boolean }[]): string {
  let out = text;
  for (const { encoded: v, anywhere } of values) {
    let from = 0;
    for (let i = out.indexOf(v); i !== -1; i = out.indexOf(v, from)) {
      if (!anywhere && insideToken(out, i, i + v.length)) {
        from = i + 1;
        continue;
      }
      out = out.slice(0, i) + CENSOR + out.slice(i + v.length);
      from = i + CENSOR.length;
    }
  }
  return out;
}

/** Options of the root logger. */
export interface LoggerOptions {
  level?: string;
  /** Where lines go (stdout by default); tests pass a buffer. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
  /** Secret values masked in every line (none when omitted). */
  secrets?: SecretRegistry;
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
      ...(opts.secrets
        ? { hooks: { streamWrite: (line: string) => opts.secrets?.redact(line) ?? line } }
        : {}),
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

const LEVEL_METHODS = new Set(["fatal", "error", "warn", "info", "debug", "trace"]);
const noop = () => {};

/**
 * Child logger for one reconcile: every line carries the reconcile id and the object key. Made on
 * first use: at the default level most passes log nothing, and a pino child (its bindings
 * serialized and run through the redaction) was about 5% of all a pass allocated
 * (docs/benchmarks.md). A call at a level the controller's logger has off is a no-op, as pino's own.
 */
export function reconcileLogger(
  controllerLog: Logger,
  reconcileId: string,
  namespace: string,
  name: string,
): Logger {
  let child: Logger | undefined;
  const real = () => {
    child ??= controllerLog.child({ reconcileId, namespace, name });
    return child;
  };
  return new Proxy(controllerLog, {
    get(target, prop) {
      if (!child && typeof prop === "string" && LEVEL_METHODS.has(prop) && !target.isLevelEnabled(prop))
        return noop;
      const r = real();
      const v: unknown = Reflect.get(r, prop, r);
      return typeof v === "function" ? v.bind(r) : v;
    },
    set(_target, prop, value) {
      return Reflect.set(real(), prop, value);
    },
  });
}
