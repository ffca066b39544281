import { execFileSync, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { freePort } from "./postgres.ts";

// stripe-mock, Stripe's own API mock (Go module github.com/stripe/stripe-mock), for the payment
// tests: built by commerce/hack/stripe-mock.sh into ~/.cache/cronscale keyed by version, started
// once per run on a random port of 127.0.0.1 (its HTTPS listener on another loopback port). It is
// stateless (every answer comes from its fixtures; ids are new on each create) and sends no
// webhooks: the tests sign Stripe events themselves with the endpoint's secret
// (stripe.webhooks.generateTestHeaderString) and post them to the service.

declare module "vitest" {
  export interface ProvidedContext {
    stripeMockUrl: string;
    stripeMockBin: string;
  }
}

const SCRIPT = fileURLToPath(new URL("../../hack/stripe-mock.sh", import.meta.url));

export interface StripeMock {
  url: string;
  port: number;
  /** Requests it received, as "METHOD /path" (from its log). */
  requests: string[];
  stop: () => Promise<void>;
}

/** Builds (when not cached) stripe-mock; returns the binary's path. */
export function stripeMockBinary(): string {
  return execFileSync(SCRIPT, { stdio: ["ignore", "pipe", "inherit"] })
    .toString()
    .trim();
}

/** Starts stripe-mock on `port` (a free one when not given) of 127.0.0.1; resolves once it serves. */
export async function startStripeMock(bin: string, port?: number): Promise<StripeMock> {
  const p = port ?? (await freePort());
  const httpsPort = await freePort();
  const proc = spawn(bin, ["-http-addr", `127.0.0.1:${p}`, "-https-addr", `127.0.0.1:${httpsPort}`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const requests: string[] = [];
  let log = "";
  let pending = "";
  proc.stdout.on("data", (b: Buffer) => {
    pending += b.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const l of lines) {
      const m = /^Request: (\S+ \S+)/.exec(l);
      if (m?.[1]) requests.push(m[1]);
      log = `${log}${l}\n`.slice(-4000);
    }
  });
  proc.stderr.on("data", (b: Buffer) => {
    log = (log + b.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${p}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      // Any answer (401 without a key) means it serves.
      await fetch(`${url}/v1/balance`);
      break;
    } catch {
      if (proc.exitCode !== null || Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`stripe-mock did not start on ${url}:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  requests.length = 0;
  const stop = async () => {
    if (proc.exitCode !== null) return;
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (proc.exitCode === null) proc.kill("SIGKILL");
  };
  return { url, port: p, requests, stop };
}

export default async function setup(project: TestProject) {
  const bin = stripeMockBinary();
  const mock = await startStripeMock(bin);
  project.provide("stripeMockUrl", mock.url);
  project.provide("stripeMockBin", bin);
  return mock.stop;
}
