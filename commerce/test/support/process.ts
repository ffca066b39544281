import { spawn } from "node:child_process";
import { createServer } from "node:net";

// The real service process (node src/main.ts) on a free port of 127.0.0.1, as the container runs.

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });

export interface ServiceProcess {
  port: number;
  output: () => string;
  stop: () => Promise<number | null>;
  /** Kills the process at once (SIGKILL), as a node failure or the OOM killer would. */
  kill: () => Promise<number | null>;
}

/** Starts the process with `env` (PORT and the listen address added) and waits until it is ready. */
export async function startProcess(env: (port: number) => Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      ...env(port),
      PORT: String(port),
      COMMERCE_LISTEN_HOST: "127.0.0.1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (b: Buffer) => (out += b.toString()));
  child.stderr.on("data", (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  let ready = 0;
  for (let i = 0; i < 150 && ready !== 200 && child.exitCode === null; i++) {
    ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
  }
  if (ready !== 200) {
    child.kill("SIGKILL");
    throw new Error(`the service did not become ready:\n${out}`);
  }
  return {
    port,
    output: () => out,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
    kill: async () => {
      child.kill("SIGKILL");
      return exited;
    },
  };
}
