import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { kubeconfigPath } from "../../support/cluster.ts";

const fixture = fileURLToPath(new URL("./fixtures/mirror-operator.ts", import.meta.url));

/** One parsed JSON log line of the fixture operator. */
export type LogLine = Record<string, unknown> & { msg?: string; time?: string };

/** A running fixture operator process and its log. */
export interface OperatorProcess {
  proc: ChildProcess;
  lines: LogLine[];
  identity: string;
  exited: Promise<number | null>;
  /** Waits for a log line matching `pred` (searching lines already seen too). */
  waitForLine(pred: (l: LogLine) => boolean, timeoutMs?: number, what?: string): Promise<LogLine>;
  /** The probe server port, from the "probe server listening" line. */
  port(): Promise<number>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts the mirror operator in a child process with the given MIRROR_* env. */
export function startOperator(identity: string, env: Record<string, string>): OperatorProcess {
  const proc = spawn(process.execPath, [fixture], {
    env: { ...process.env, MIRROR_KUBECONFIG: kubeconfigPath(), MIRROR_IDENTITY: identity, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: LogLine[] = [];
  const listeners = new Set<() => void>();
  let buf = "";
  proc.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let i = buf.indexOf("\n");
    while (i >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        lines.push({ msg: `(raw) ${line}` });
      }
      i = buf.indexOf("\n");
    }
    for (const l of listeners) l();
  });
  let stderr = "";
  proc.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => {
    proc.on("exit", (code) => {
      if (stderr.trim() && process.env.CRONSCALE_TEST_VERBOSE)
        process.stderr.write(`[${identity}] ${stderr}\n`);
      resolve(code);
      for (const l of listeners) l();
    });
  });
  const waitForLine = (pred: (l: LogLine) => boolean, timeoutMs = 30_000, what = "log line") =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const hit = lines.find(pred);
        if (hit) {
          cleanup();
          resolve(hit);
        } else if (proc.exitCode !== null || proc.signalCode !== null) {
          cleanup();
          reject(new Error(`${identity} exited before ${what}; stderr: ${stderr.slice(-2000)}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(
          new Error(
            `${identity}: timed out waiting for ${what}; last lines: ${JSON.stringify(lines.slice(-5))}`,
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return {
    proc,
    lines,
    identity,
    exited,
    waitForLine,
    port: async () =>
      Number((await waitForLine((l) => l.msg === "probe server listening", 30_000, "probe server")).port),
    kill: (signal = "SIGTERM") => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    },
  };
}

/** GET on the operator's probe server. */
export async function probe(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}
