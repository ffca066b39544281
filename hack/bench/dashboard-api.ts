// The dashboard against a real API server with N tasks in one namespace (default 10,000): the
// dashboard runs as its own process (`src/dashboard/main.ts`), a viewer signs in with a
// ServiceAccount token. The dashboard is started twice on the same tasks: first with every list
// the API server's answer to the viewer's own LIST (--no-task-cache, the baseline), then with the
// shared watched copy (task-cache.ts). Measures for each the list page (server time), search
// keystrokes on the server (p50/p99 of the partial that search-as-you-type fetches), the list's
// first paint in Chromium, and the dashboard process's memory, and prints shared/baseline
// ratios. No operator is needed: the dashboard reads the objects.
//   KUBECONFIG=/var/tmp/cronscale/clusters/<name>/kubeconfig node hack/bench/dashboard-api.ts [N]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg } from "node:os";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeTransport } from "../../src/runtime/rest.ts";
import { launchChromium } from "../../test/support/browser.ts";

const n = Number(process.argv[2] ?? 10_000);
if (!process.env.KUBECONFIG) {
  console.log("dashboard-api: skipped (set KUBECONFIG to a local cluster, e.g. after make cluster-up)");
  process.exit(0);
}
const kc = new KubeConfig();
kc.loadFromDefault();
const admin = KubeTransport.create(kc);
const ns = `bench-dash-${randomBytes(3).toString("hex")}`;
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Number((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0).toFixed(1));
};

/**
 * Starts the dashboard with `args`, signs in as the viewer, measures the list page, keystrokes,
 * first paint and memory, and stops it.
 */
async function measure(token: string, args: string[]) {
  // The dashboard as its own process on a free loopback port.
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  child = spawn(
    process.execPath,
    [
      "src/dashboard/main.ts",
      "--listen",
      `127.0.0.1:${port}`,
      "--kubeconfig",
      process.env.KUBECONFIG ?? "",
      "--namespaces",
      ns,
      ...args,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/dashboard/sign-in`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 600) throw new Error("the dashboard did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
  const rss = () => {
    const st = readFileSync(`/proc/${child?.pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)?.[1] ?? 0);
    return { rssMiB: Math.round(kb("VmRSS") / 1024), peakMiB: Math.round(kb("VmHWM") / 1024) };
  };
  const idle = rss();

  // Sign in over HTTP (the cookie is Secure; fetch sends it to loopback anyway).
  const form = await fetch(`${base}/dashboard/sign-in`);
  const pre = (form.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
  const signed = await fetch(`${base}/dashboard/sign-in`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: pre, origin: base, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  const cookie = (signed.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  if (signed.status !== 303) throw new Error(`sign-in answered ${signed.status}`);
  const list = `${base}/dashboard/compute/serverless/tasks?namespace=${ns}`;

  // The list page, server side (five loads; each lists N tasks from the API server as the viewer).
  const pages: number[] = [];
  let bytes = 0;
  let t = process.hrtime.bigint();
  for (let i = 0; i < 5; i++) {
    t = process.hrtime.bigint();
    const r = await fetch(list, { headers: { cookie } });
    bytes = (await r.text()).length;
    pages.push(ms(t));
  }

  // Keystrokes as the script sends them (the viewer's list is reused for 5 s within a burst).
  const keys: number[] = [];
  for (const word of ["backup", "task-0999", "sync", "cleanup", "task-1", "zzz"]) {
    for (let i = 1; i <= word.length; i++) {
      t = process.hrtime.bigint();
      const r = await fetch(
        `${base}/dashboard/compute/serverless/tasks/results?namespace=${ns}&q=${word.slice(0, i)}`,
        {
          headers: { cookie, "x-partial": "1" },
        },
      );
      await r.text();
      if (r.status !== 200) throw new Error(`search answered ${r.status}`);
      keys.push(ms(t));
    }
  }

  // First paint of the list in Chromium (signed in through the form, as a person would).
  const chromium = await launchChromium();
  const page = await (await chromium.browser.newContext()).newPage();
  await page.goto(
    `http://localhost:${port}/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/compute/serverless/tasks?namespace=${ns}`)}`,
  );
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/dashboard/compute/serverless/tasks**");
  const paints: number[] = [];
  for (let i = 0; i < 3; i++) {
    await page.reload();
    await page.locator("#task-count").waitFor();
    const fcp = await page.waitForFunction(
      () => performance.getEntriesByName("first-contentful-paint")[0]?.startTime,
      undefined,
      { timeout: 30_000 },
    );
    paints.push(Number(await fcp.jsonValue()));
  }
  await chromium.close();

  const measured = {
    listPageMs: pct(pages, 0.5),
    listPageBytes: bytes,
    keystrokes: keys.length,
    searchP50Ms: pct(keys, 0.5),
    searchP99Ms: pct(keys, 0.99),
    firstPaintMs: pct(paints, 0.5),
    dashboardRssIdleMiB: idle.rssMiB,
    ...rss(),
    // The machine's load while measuring (figures on a busy shared machine are slower).
    loadAverage1m: Number(loadavg()[0]?.toFixed(1)),
  };
  child.kill("SIGTERM");
  child = undefined;
  return measured;
}

await admin.request("POST", "/api/v1/namespaces", {
  body: { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
});
let child: ReturnType<typeof spawn> | undefined;
try {
  // N tasks, 32 creates in flight.
  const words = ["backup", "report", "sync", "cleanup"];
  let next = 0;
  const t = process.hrtime.bigint();
  const worker = async () => {
    for (let i = next++; i < n; i = next++)
      await admin.request("POST", `/apis/cronscale.io/v1alpha1/namespaces/${ns}/scheduledtasks`, {
        body: {
          apiVersion: "cronscale.io/v1alpha1",
          kind: "ScheduledTask",
          metadata: { name: `task-${String(i).padStart(5, "0")}-${words[i % 4]}` },
          spec: {
            schedule: "0 3 * * *",
            language: "Bash",
            plan: "Micro",
            timeoutSeconds: 60,
            script: "true",
          },
        },
      });
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const createSeconds = Number((ms(t) / 1000).toFixed(1));

  // A viewer who may list tasks in the namespace, and its token.
  for (const body of [{ apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "viewer" } }])
    await admin.request("POST", `/api/v1/namespaces/${ns}/serviceaccounts`, { body });
  await admin.request("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    body: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "viewer" },
      rules: [{ apiGroups: ["cronscale.io"], resources: ["scheduledtasks"], verbs: ["get", "list"] }],
    },
  });
  await admin.request("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    body: {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "viewer" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "viewer" },
      subjects: [{ kind: "ServiceAccount", name: "viewer", namespace: ns }],
    },
  });
  const tr = await admin.request<{ status: { token: string } }>(
    "POST",
    `/api/v1/namespaces/${ns}/serviceaccounts/viewer/token`,
    {
      body: {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 3600 },
      },
    },
  );
  const token = tr.status.token;

  // The same tasks and viewer, the dashboard started twice: each list the viewer's own LIST
  // (--no-task-cache, the baseline), then one watched copy shared by all viewers.
  const viewerLists = await measure(token, ["--no-task-cache"]);
  const shared = await measure(token, []);
  const ratio = (k: "listPageMs" | "searchP50Ms" | "searchP99Ms" | "firstPaintMs" | "rssMiB") =>
    Number((shared[k] / Math.max(viewerLists[k], 0.1)).toFixed(2));
  console.log(
    JSON.stringify({
      tasks: n,
      createSeconds,
      viewerLists,
      shared,
      sharedOverViewerLists: {
        listPage: ratio("listPageMs"),
        searchP50: ratio("searchP50Ms"),
        searchP99: ratio("searchP99Ms"),
        firstPaint: ratio("firstPaintMs"),
        rss: ratio("rssMiB"),
      },
    }),
  );
} finally {
  child?.kill("SIGTERM");
  await admin.request("DELETE", `/api/v1/namespaces/${ns}`).catch(() => undefined);
}
