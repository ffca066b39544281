import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeAuthorizer, startHistoryServer } from "../../../src/archive/http.ts";
import { MemoryExecutionArchive } from "../../../src/archive/memory.ts";
import { HttpArchiveReader } from "../../../src/dashboard/archive.ts";
import { KubeViewerApi } from "../../../src/dashboard/kube.ts";
import { createDashboard } from "../../../src/dashboard/server.ts";
import { silentLogger } from "../../../src/log.ts";
import { RealKubeClient } from "../../../src/runtime/client.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import {
  launchChromium,
  newContext,
  screenshots,
  seriousA11yViolations,
  type TestBrowser,
} from "../../support/browser.ts";
import { kubeConfig, kubectl, useNamespace } from "../../support/cluster.ts";
import { periodicRun } from "../../support/runs.ts";
import { installCrds } from "../scheduledtask/operator.ts";
import { createViewers, phoneOverflow } from "./helpers.ts";

// A task's page in Chromium with an every-minute task's week in the execution archive (10,080
// runs): the history read through the history endpoint with the viewer's own token, which the
// endpoint checks with a real TokenReview and SubjectAccessReview against the test cluster;
// paged by cursor, filtered by result, a run's whole output, the month's billed time. A viewer
// who may not get the task sees the archive's refusal. (The archive is the in-memory one: its SQL
// paging is tested against PostgreSQL in src/archive/store.test.ts and measured in
// hack/bench/archive-history.ts.)

const ns = useNamespace("dash-history");
const TASKS = "/dashboard/compute/serverless/tasks";
const NOW = new Date();
const RUNS = 10_080;
let app: FastifyInstance;
let server: Server;
let base = "";
let chromium: TestBrowser;
let tokens: Record<"reader" | "lister", string>;

beforeAll(async () => {
  await installCrds();
  tokens = await createViewers(ns.name, {
    reader: {
      rules: [
        "{apiGroups: [cronscale.io], resources: [scheduledtasks], verbs: [get, list]}",
        "{apiGroups: [cronscale.io], resources: [taskexecutions], verbs: [list]}",
      ],
      ready: [["get", "scheduledtasks.cronscale.io"]],
    },
    // May list tasks but not get them: the endpoint's SubjectAccessReview refuses the history.
    lister: {
      rules: [
        "{apiGroups: [cronscale.io], resources: [scheduledtasks], verbs: [list]}",
        "{apiGroups: [cronscale.io], resources: [taskexecutions], verbs: [list]}",
      ],
      ready: [["list", "scheduledtasks.cronscale.io"]],
    },
  });
  await kubectl(["apply", "-f", "-"], {
    input: `apiVersion: cronscale.io/v1alpha1
kind: ScheduledTask
metadata: {name: every-minute, namespace: ${ns.name}}
spec: {schedule: "* * * * *", language: Bash, plan: Micro, timeoutSeconds: 30, script: "echo ok", suspend: true}
`,
  });
  const archive = new MemoryExecutionArchive();
  await archive.insert(Array.from({ length: RUNS }, (_, i) => periodicRun(ns.name, "every-minute", i, NOW)));
  const kc = kubeConfig();
  server = await startHistoryServer(
    { host: "127.0.0.1", port: 0, log: silentLogger() },
    { archive, authorizer: new KubeAuthorizer(new RealKubeClient(KubeTransport.create(kc))) },
  );
  app = await createDashboard({
    log: silentLogger(),
    namespaces: [ns.name],
    viewerApi: (t) => new KubeViewerApi(kc, t),
    archive: new HttpArchiveReader(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
  });
  base = (await app.listen({ host: "127.0.0.1", port: 0 })).replace("127.0.0.1", "localhost");
  chromium = await launchChromium();
}, 300_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  server?.close();
});

async function signedIn(token: string, path: string) {
  const page = await (await newContext(chromium.browser)).newPage();
  await page.goto(`${base}${path}`);
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**${path}`);
  return page;
}

describe("a task's history from the archive, in Chromium", () => {
  it("pages an every-minute task's week by cursor, filters failed runs, opens a run's output", async () => {
    const taskPath = `${TASKS}/${ns.name}/every-minute`;
    const page = await signedIn(tokens.reader, taskPath);
    const rows = page.locator("#history tbody tr");
    expect(await rows.count()).toBe(50);
    expect(await page.locator("dt:text-is('Created') + dd time").count()).toBe(1);
    // Billed this month: the runs of this month among the week's (2 s each).
    const month = NOW.toISOString().slice(0, 7);
    const inMonth = Array.from({ length: RUNS }, (_, i) =>
      periodicRun(ns.name, "every-minute", i, NOW),
    ).filter((r) => r.spec.completionTime.startsWith(month));
    expect(await page.locator("dt:text-is('Billed this month') + dd").textContent()).toContain(
      `${(inMonth.length * 2).toLocaleString("en")} s`,
    );
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "task-history");
    expect(await phoneOverflow(page)).toBe(0);

    // Three pages deep, then back to the newest.
    const firstOnPage: string[] = [];
    for (let p = 0; p < 3; p++) {
      firstOnPage.push((await rows.first().locator("a").getAttribute("href")) ?? "");
      await page.getByRole("link", { name: "Older runs" }).click();
      await page.waitForURL(/cursor=/);
    }
    expect(new Set(firstOnPage).size).toBe(3);
    expect(await rows.count()).toBe(50);
    await page.getByRole("link", { name: "Newest runs" }).click();
    await page.waitForURL((u) => !u.search.includes("cursor"));
    expect(await rows.first().locator("a").getAttribute("href")).toBe(firstOnPage[0]);

    await page.getByLabel("Result").selectOption("Failed");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/result=Failed/);
    expect(await rows.count()).toBe(50);
    expect(await page.locator("#history tbody .badge.Succeeded").count()).toBe(0);
    await page.getByRole("link", { name: "Older runs" }).click();
    await page.waitForURL(/result=Failed.*cursor=|cursor=.*result=Failed/);
    expect(await page.locator("#history tbody .badge.Failed").count()).toBe(50);

    await rows
      .first()
      .getByRole("link", { name: /Output of the run/ })
      .click();
    await page.waitForURL(/\/runs\/every-minute-\d+\/output$/);
    expect(await page.locator("pre").textContent()).toMatch(/^run \d+: connection refused\n$/);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, "task-run-output");
    expect(await phoneOverflow(page)).toBe(0);
  }, 120_000);

  it("gives a viewer who may not get the task the API server's 403, and nothing of the archive", async () => {
    const page = await signedIn(tokens.lister, `${TASKS}?namespace=${ns.name}`);
    const res = await page.goto(`${base}${TASKS}/${ns.name}/every-minute`);
    // The viewer may not get the task itself: the API server's 403, nothing of the archive shown.
    expect(res?.status()).toBe(403);
    expect(await page.locator("#history").count()).toBe(0);
  }, 60_000);
});
