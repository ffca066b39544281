import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { taskManualJobName } from "../api/v1alpha1/names.ts";
import { loopbackKubeConfig } from "../runtime/testing.ts";
import { main } from "./main.ts";

// The cluster commands in-process against a loopback HTTP server standing in for the API server:
// which request each command sends (method, path, content type, body), what it prints as a table
// or with -o json|yaml, and its exit codes. The integration test runs them on a real cluster.

interface Seen {
  method: string;
  path: string;
  contentType: string;
  authorization: string;
  body: unknown;
}
const seen: Seen[] = [];
const NOW = new Date("2026-11-23T12:00:00Z");
const platform = {
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScalePlatform",
  metadata: { name: "shop", namespace: "ns" },
  spec: { localization: { timezone: "Europe/Berlin" } },
  status: {
    backup: {
      recoverableFrom: "2026-11-20T01:00:00Z",
      lastSuccessfulBackup: {
        label: "20261122-010002F",
        type: "full",
        startTime: "2026-11-22T01:00:02Z",
        stopTime: "2026-11-22T01:02:00Z",
      },
      recentBackups: [
        {
          label: "20261122-010002F",
          type: "full",
          startTime: "2026-11-22T01:00:02Z",
          stopTime: "2026-11-22T01:02:00Z",
        },
      ],
    },
  },
};
let executions: unknown[] = [];

function answer(req: IncomingMessage, body: unknown): [number, unknown] {
  const url = new URL(req.url ?? "/", "http://x");
  const base = "/apis/cronscale.io/v1alpha1/namespaces/ns";
  if (req.method === "GET" && url.pathname === "/apis/cronscale.io/v1alpha1") {
    const kinds = [
      "ScheduledTask",
      "TaskExecution",
      "ScalePlatform",
      "ScalePlatformBackup",
      "ScalePlatformRestore",
    ];
    return [
      200,
      { resources: kinds.map((kind) => ({ name: `${kind.toLowerCase()}s`, kind, namespaced: true })) },
    ];
  }
  if (url.pathname.startsWith(`${base}/scheduledtasks/missing`))
    return [
      404,
      { kind: "Status", reason: "NotFound", message: 'scheduledtasks.cronscale.io "missing" not found' },
    ];
  if (req.method === "PATCH" && url.pathname === `${base}/scheduledtasks/hello`)
    return [
      200,
      {
        metadata: { name: "hello", namespace: "ns" },
        spec: { timeoutSeconds: 60, ...(body as { spec?: object }).spec },
      },
    ];
  if (req.method === "GET" && url.pathname === `${base}/scheduledtasks/hello`)
    return [
      200,
      { metadata: { name: "hello" }, spec: { schedule: "30 1 * * *", timezone: "America/New_York" } },
    ];
  if (req.method === "GET" && url.pathname === `${base}/scheduledtasks`)
    return [
      200,
      {
        items: [
          { metadata: { name: "hello" } },
          { metadata: { name: "hourly" } },
          { metadata: { name: "x" } },
        ],
      },
    ];
  if (req.method === "GET" && url.pathname === `${base}/taskexecutions`) return [200, { items: executions }];
  if (req.method === "GET" && url.pathname === `${base}/scaleplatforms/shop`) return [200, platform];
  if (req.method === "POST" && url.pathname.endsWith("/scaleplatformbackups")) {
    const b = body as { metadata: { generateName: string } };
    return [201, { ...b, metadata: { ...b.metadata, name: `${b.metadata.generateName}abcde` } }];
  }
  if (req.method === "POST" && url.pathname.endsWith("/scaleplatformrestores")) {
    const b = body as { metadata: { generateName: string } };
    return [201, { ...b, metadata: { ...b.metadata, name: `${b.metadata.generateName}xyz12` } }];
  }
  return [404, { kind: "Status", reason: "NotFound", message: "not here" }];
}

let server: Server;
let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.on("data", (c) => {
      text += c;
    });
    req.on("end", () => {
      const body = text ? JSON.parse(text) : undefined;
      // Discovery (plural and scope of a kind) is not what a command is about.
      if (req.url !== "/apis/cronscale.io/v1alpha1")
        seen.push({
          method: req.method ?? "",
          path: req.url ?? "",
          contentType: req.headers["content-type"] ?? "",
          authorization: req.headers.authorization ?? "",
          body,
        });
      const [status, out] = answer(req, body);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  dir = mkdtempSync(join(tmpdir(), "cronscale-cli-"));
  const kc = loopbackKubeConfig((server.address() as AddressInfo).port, "s3cret");
  const file = join(dir, "kubeconfig");
  writeFileSync(file, kc.exportConfig());
  env = { KUBECONFIG: file };
});
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
  executions = [];
});

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), now: () => NOW }, env);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("cronscale run, suspend, resume", () => {
  it("run sets a new run-now annotation by merge patch, as the kubeconfig's user, and names the Job", async () => {
    const r = await cli("run", "hello", "-n", "ns");
    expect(r.code).toBe(0);
    expect(seen).toHaveLength(1);
    const s = seen[0] as Seen;
    expect(s).toMatchObject({
      method: "PATCH",
      path: "/apis/cronscale.io/v1alpha1/namespaces/ns/scheduledtasks/hello",
      contentType: "application/merge-patch+json",
      authorization: "Bearer s3cret",
    });
    const token = (s.body as { metadata: { annotations: Record<string, string> } }).metadata.annotations[
      "cronscale.io/run-now"
    ];
    expect(token).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.out).toBe(`scheduledtask/hello run requested (job ${taskManualJobName("hello", token ?? "")})`);
    // Each run is a new value: a second run is a second Job.
    await cli("run", "hello", "-n", "ns");
    const again = (seen[1]?.body as { metadata: { annotations: Record<string, string> } } | undefined)
      ?.metadata?.annotations;
    expect(again?.["cronscale.io/run-now"]).not.toBe(token);
  });

  it("run --wait prints the run's output and exits with its result", async () => {
    let token = "";
    const pending = cli("run", "hello", "-n", "ns", "--wait", "--timeout", "20s");
    // The record appears once the "operator" has run the Job named after the token.
    await expect.poll(() => seen.length).toBeGreaterThan(0);
    const sent = seen[0]?.body as { metadata: { annotations: Record<string, string> } };
    token = sent.metadata.annotations["cronscale.io/run-now"] ?? "";
    executions = [
      { metadata: { name: "older" }, spec: { jobName: "hello-other", result: "Succeeded", output: "no\n" } },
      {
        metadata: { name: "hello-run" },
        spec: { jobName: taskManualJobName("hello", token), result: "Failed", exitCode: 3, output: "boom\n" },
      },
    ];
    const r = await pending;
    expect(r.out).toBe("boom");
    expect(r.err).toContain("hello-run: Failed, exit code 3");
    expect(r.code).toBe(1);
    expect(seen.some((s) => s.path.includes("labelSelector=cronscale.io%2Ftask%3Dhello"))).toBe(true);
  });

  it("suspend and resume set spec.suspend; -o yaml prints the task", async () => {
    expect((await cli("suspend", "hello", "-n", "ns")).out).toBe("scheduledtask/hello suspended");
    expect(seen[0]?.body).toEqual({ spec: { suspend: true } });
    const r = await cli("resume", "hello", "-n", "ns", "-o", "yaml");
    expect(seen[1]?.body).toEqual({ spec: { suspend: false } });
    expect(parseYaml(r.out)).toMatchObject({ metadata: { name: "hello" }, spec: { suspend: false } });
  });

  it("reports the API server's refusal and exits 1; usage errors exit 2", async () => {
    const r = await cli("suspend", "missing", "-n", "ns");
    expect(r.code).toBe(1);
    expect(r.err).toBe('error: 404 NotFound: scheduledtasks.cronscale.io "missing" not found');
    expect((await cli("run")).code).toBe(2);
    expect((await cli("run", "a", "b")).err).toContain("expected the task's name, got a b");
    expect((await cli("run", "a", "-o", "xml")).err).toContain("--output must be table, json or yaml");
    expect((await cli("run", "a", "--timeout", "soon")).code).toBe(2);
    expect((await cli("run", "a", "--frobnicate")).code).toBe(2);
    expect(seen).toHaveLength(1);
  });

  it("uses the kubeconfig context's namespace when -n is absent, and refuses an unknown --context", async () => {
    await cli("suspend", "hello");
    expect(seen[0]?.path).toBe("/apis/cronscale.io/v1alpha1/namespaces/default/scheduledtasks/hello");
    const r = await cli("suspend", "hello", "--context", "nope");
    expect(r.code).toBe(1);
    expect(r.err).toBe('error: context "nope" not found in the kubeconfig');
  });
});

describe("cronscale backup, restore", () => {
  it("backup creates a ScalePlatformBackup named by the API server", async () => {
    const r = await cli("backup", "shop", "-n", "ns", "--type", "incr");
    expect(r.code).toBe(0);
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/apis/cronscale.io/v1alpha1/namespaces/ns/scaleplatformbackups",
      body: {
        apiVersion: "cronscale.io/v1alpha1",
        kind: "ScalePlatformBackup",
        metadata: { generateName: "shop-manual-", namespace: "ns" },
        spec: { platformName: "shop", type: "incr" },
      },
    });
    expect(r.out).toBe("scaleplatformbackup/shop-manual-abcde created (incr backup of shop)");
    expect((await cli("backup", "shop", "--type", "diff")).code).toBe(2);
  });

  it("restore checks the target against the window, dry-runs, then creates; -o json prints the object", async () => {
    const r = await cli("restore", "shop", "-n", "ns", "--backup", "20261122-010002F", "-o", "json");
    expect(r.code).toBe(0);
    const posts = seen.filter((s) => s.method === "POST");
    expect(posts.map((s) => s.path)).toEqual([
      "/apis/cronscale.io/v1alpha1/namespaces/ns/scaleplatformrestores?dryRun=All",
      "/apis/cronscale.io/v1alpha1/namespaces/ns/scaleplatformrestores",
    ]);
    expect(JSON.parse(r.out)).toMatchObject({
      kind: "ScalePlatformRestore",
      metadata: { name: "shop-restore-xyz12" },
      spec: { platformName: "shop", backupLabel: "20261122-010002F" },
    });
  });

  it("reads a wall-clock --time in the platform's zone, an RFC 3339 one as given", async () => {
    await cli("restore", "shop", "-n", "ns", "--time", "2026-11-23T10:30", "--dry-run");
    expect((seen.at(-1)?.body as { spec: object } | undefined)?.spec).toEqual({
      platformName: "shop",
      targetTime: "2026-11-23T09:30:00Z",
    });
    expect(seen.filter((s) => s.method === "POST")).toHaveLength(1);
    await cli("restore", "shop", "-n", "ns", "--time", "2026-11-23T10:30:00+05:00", "--dry-run");
    expect((seen.at(-1)?.body as { spec: object } | undefined)?.spec).toEqual({
      platformName: "shop",
      targetTime: "2026-11-23T05:30:00Z",
    });
  });

  it("refuses a target outside the window with the operator's message, and lists the choices without one", async () => {
    const early = await cli("restore", "shop", "-n", "ns", "--time", "2026-11-01T00:00:00Z");
    expect(early.code).toBe(1);
    expect(early.err).toContain("recoverable window: 2026-11-20T01:00:00Z to 2026-11-23T12:00:00Z");
    const none = await cli("restore", "shop", "-n", "ns");
    expect(none.code).toBe(2);
    expect(none.err).toContain("choose one target");
    expect(none.err).toContain("recent backups: 20261122-010002F");
    expect(seen.filter((s) => s.method === "POST")).toHaveLength(0);
  });
});

describe("cronscale next-runs, --version, completion", () => {
  it("next-runs of a task reads its schedule and zone from the cluster", async () => {
    const r = await cli(
      "next-runs",
      "hello",
      "-n",
      "ns",
      "--from",
      "2021-11-06T12:00:00Z",
      "-c",
      "2",
      "-o",
      "json",
    );
    expect(JSON.parse(r.out)).toEqual({
      schedule: "30 1 * * *",
      timezone: "America/New_York",
      runs: ["2021-11-07T01:30:00-04:00", "2021-11-07T01:30:00-05:00"],
    });
  });

  it("prints the package version", async () => {
    expect((await cli("--version")).out).toMatch(/^cronscale \d+\.\d+\.\d+/);
  });

  it("completes commands, flags, values and the names of tasks from the cluster", async () => {
    expect((await cli("__complete", "re")).out.split("\n")).toEqual(["resume", "restore"]);
    expect((await cli("__complete", "backup", "--ty")).out).toBe("--type");
    expect((await cli("__complete", "history", "-o", "")).out.split("\n")).toEqual(["table", "json", "yaml"]);
    expect((await cli("__complete", "--kubectl", "completion", "")).out.split("\n")).toEqual([
      "bash",
      "zsh",
      ":4",
    ]);
    expect((await cli("__complete", "run", "-n", "ns", "h")).out).toBe("hello\nhourly");
    expect(seen.at(-1)?.path).toBe("/apis/cronscale.io/v1alpha1/namespaces/ns/scheduledtasks");
    // Once the task is named, nothing more; a cluster that refuses: nothing offered, no error.
    expect((await cli("__complete", "run", "-n", "ns", "hello", "")).out).toBe("");
    expect(await cli("__complete", "backup", "-n", "ns", "")).toEqual({ code: 0, out: "", err: "" });
    const bash = await cli("completion", "bash");
    expect(bash.out).toContain("complete -o default -F _cronscale cronscale kubectl-cronscale");
    expect((await cli("completion", "fish")).code).toBe(2);
  });
});
