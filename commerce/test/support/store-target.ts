import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { freshDatabase, OPERATOR_KEY } from "./harness.ts";

// Where the store's browser test points. By default the real service process (node src/main.ts)
// on 127.0.0.1, with the store on the platform host `localhost` (Chromium treats it as a secure
// origin, so the Secure cookies work over plain HTTP) and the API on `127.0.0.1`. With
// COMMERCE_STORE_URL, COMMERCE_API_URL and COMMERCE_API_KEY set, the test drives that deployment
// instead (e.g. a ScalePlatform through the cluster's ingress); it must then be configured with
// the test's webhook receiver and SMTP sink.

export interface StoreTarget {
  storeUrl: string;
  apiUrl: string;
  apiKey: string;
  stop: () => Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => resolve(typeof a === "object" && a ? a.port : 0));
    });
  });

export async function storeTarget(env: Record<string, string>): Promise<StoreTarget> {
  const ext = process.env;
  if (ext.COMMERCE_STORE_URL && ext.COMMERCE_API_URL && ext.COMMERCE_API_KEY) {
    return {
      storeUrl: ext.COMMERCE_STORE_URL.replace(/\/$/, ""),
      apiUrl: ext.COMMERCE_API_URL.replace(/\/$/, ""),
      apiKey: ext.COMMERCE_API_KEY,
      stop: async () => {},
    };
  }
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ["src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: await freshDatabase(),
      PORT: String(port),
      COMMERCE_LISTEN_HOST: "127.0.0.1",
      COMMERCE_LOG_LEVEL: "warn",
      API_KEY: OPERATOR_KEY,
      PLATFORM_URL: `http://localhost:${port}`,
      API_URL: `http://127.0.0.1:${port}`,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
  child.stderr?.on("data", (b: Buffer) => (out = (out + b.toString()).slice(-4000)));
  const api = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ready = await fetch(`${api}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (ready === 200) break;
    if (child.exitCode !== null || i > 150) {
      child.kill("SIGKILL");
      throw new Error(`the service did not become ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    storeUrl: `http://localhost:${port}`,
    apiUrl: api,
    apiKey: OPERATOR_KEY,
    stop: async () => {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}
