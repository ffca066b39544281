import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeViewerApi } from "../../../src/dashboard/kube.ts";
import { createDashboard } from "../../../src/dashboard/server.ts";
import { SharedTaskCache, TASK_TYPE } from "../../../src/dashboard/task-cache.ts";
import { silentLogger } from "../../../src/log.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { launchChromium, newContext, screenshots, type TestBrowser } from "../../support/browser.ts";
import { kubeConfig, kubectl, useNamespace } from "../../support/cluster.ts";
import { installCrds } from "../scheduledtask/operator.ts";
import { waitForRbac } from "./helpers.ts";

// Search as you type over 1,000 task cards in Chromium. The tasks are created straight through
// the API server (16 creates in flight, no operator), so the test costs seconds, not a
// scheduler's worth of runs. The dashboard serves them from its shared task list (a watch made
// with the test's own credentials, as the dashboard's ServiceAccount would): a task created
// later reaches the next keystroke through the watch, and a viewer the API server does not let
// list tasks there gets the 403 and not one card.

const ns = useNamespace("dash-search");
const TASKS = "/dashboard/compute/serverless/tasks";
const N = 1000;
let app: FastifyInstance;
let base = "";
let chromium: TestBrowser;
let token = "";
let strangerToken = "";
let cache: SharedTaskCache;

beforeAll(async () => {
  await installCrds();
  await kubectl(["apply", "-f", "-"], {
    input: `
apiVersion: v1
kind: ServiceAccount
metadata: {name: looker, namespace: ${ns.name}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: stranger, namespace: ${ns.name}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: looker, namespace: ${ns.name}}
rules:
  - {apiGroups: [cronscale.io], resources: [scheduledtasks], verbs: [get, list]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: looker, namespace: ${ns.name}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: looker}
subjects: [{kind: ServiceAccount, name: looker, namespace: ${ns.name}}]
`,
  });
  const t = KubeTransport.create(kubeConfig());
  const path = `/apis/cronscale.io/v1alpha1/namespaces/${ns.name}/scheduledtasks`;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) {
      await t.request("POST", path, {
        body: {
          apiVersion: "cronscale.io/v1alpha1",
          kind: "ScheduledTask",
          metadata: { name: `load-${String(i).padStart(4, "0")}` },
          spec: {
            schedule: "0 3 * * *",
            language: "Bash",
            plan: "Micro",
            timeoutSeconds: 60,
            script: "true",
          },
        },
      });
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: 16 }, worker));
  console.log(`${N} tasks created in ${Date.now() - started} ms`);
  await waitForRbac(ns.name, "looker", [["list", "scheduledtasks.cronscale.io"]]);
  token = (
    await kubectl(["create", "token", "looker", "--duration=1h"], { namespace: ns.name })
  ).stdout.trim();
  strangerToken = (
    await kubectl(["create", "token", "stranger", "--duration=1h"], { namespace: ns.name })
  ).stdout.trim();
  const kc = kubeConfig();
  const own = KubeTransport.create(kc);
  cache = new SharedTaskCache({
    log: silentLogger(),
    sourceFor: (n) => new KubeListWatch(own, TASK_TYPE, n),
  });
  app = await createDashboard({
    log: silentLogger(),
    namespaces: [ns.name],
    viewerApi: (tk) => new KubeViewerApi(kc, tk),
    taskCache: cache,
  });
  base = (await app.listen({ host: "127.0.0.1", port: 0 })).replace("127.0.0.1", "localhost");
  chromium = await launchChromium();
}, 300_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  await cache?.stop();
});

describe("search as you type over 1,000 cards", () => {
  it("narrows the cards with each keystroke, server-side, and keeps the URL in step", async () => {
    const ctx = await newContext(chromium.browser);
    const page = await ctx.newPage();
    await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
    const count = page.locator("#task-count");
    expect(await count.textContent()).toBe(`${N} tasks; showing the first 100 by name, type more to narrow`);
    expect(await page.locator("[data-task]").count()).toBe(100);

    const search = page.getByLabel("Search by name");
    const steps: [string, number, string][] = [
      ["load-07", 100, "100 of 1000 tasks match “load-07”"],
      ["7", 10, "10 of 1000 tasks match “load-077”"],
      ["7", 1, "1 of 1000 tasks match “load-0777”"],
    ];
    for (const [keys, cards, text] of steps) {
      const started = Date.now();
      await search.pressSequentially(keys, { delay: 40 });
      await expect.poll(() => count.textContent(), { timeout: 10_000 }).toContain(text);
      expect(await page.locator("[data-task]").count()).toBe(cards);
      console.log(
        `search "${await search.inputValue()}": ${cards} cards shown ${Date.now() - started} ms after typing began`,
      );
    }
    expect(await page.locator("[data-task]").first().getAttribute("data-task")).toBe("load-0777");
    expect(new URL(page.url()).searchParams.get("q")).toBe("load-0777");
    await screenshots(page, "tasks-search-1000");
    await search.fill("");
    await expect.poll(() => count.textContent()).toContain(`${N} tasks`);

    // A task created now is found by the next keystrokes: the shared list follows the watch.
    await KubeTransport.create(kubeConfig()).request(
      "POST",
      `/apis/cronscale.io/v1alpha1/namespaces/${ns.name}/scheduledtasks`,
      {
        body: {
          apiVersion: "cronscale.io/v1alpha1",
          kind: "ScheduledTask",
          metadata: { name: "load-late" },
          spec: {
            schedule: "0 3 * * *",
            language: "Bash",
            plan: "Micro",
            timeoutSeconds: 60,
            script: "true",
          },
        },
      },
    );
    await search.pressSequentially("load-l", { delay: 40 });
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toContain("1 of 1001 tasks match");
    expect(await page.locator("[data-task]").first().getAttribute("data-task")).toBe("load-late");
    await ctx.close();
  });

  it("shows nothing of the shared list to a viewer who may not list tasks there", async () => {
    const ctx = await newContext(chromium.browser);
    const page = await ctx.newPage();
    await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
    await page.getByLabel("Token").fill(strangerToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
    expect(await page.locator("[data-task]").count()).toBe(0);
    expect(await page.locator("main").textContent()).toContain("forbidden");
    const partial = await page.request.get(`${base}${TASKS}/results?namespace=${ns.name}&q=load`);
    expect(partial.status()).toBe(403);
    expect(await partial.text()).not.toContain("load-");
    await ctx.close();
  });
});
