import type { FastifyInstance } from "fastify";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeViewerApi } from "../../../src/dashboard/kube.ts";
import { createDashboard } from "../../../src/dashboard/server.ts";
import { silentLogger } from "../../../src/log.ts";
import {
  launchChromium,
  newContext,
  screenshots,
  seriousA11yViolations,
  type TestBrowser,
} from "../../support/browser.ts";
import { kubeConfig, kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "../scheduledtask/operator.ts";
import { phoneOverflow, waitForRbac } from "./helpers.ts";

// The dashboard in this process against the real API server, driven by Debian's Chromium:
// viewers sign in with ServiceAccount tokens and every action runs as them, so what they see
// and may do is the API server's RBAC. The task controllers run too, so a run-now really runs.

const ns = useNamespace("dash", { "pod-security.kubernetes.io/enforce": "restricted" });
const TASKS = "/dashboard/compute/serverless/tasks";
let op: TestOperator;
let app: FastifyInstance;
let base = "";
let chromium: TestBrowser;
let browser: Browser;
const tokens = { editor: "", reader: "" };

const RBAC = (n: string) => `
apiVersion: v1
kind: ServiceAccount
metadata: {name: editor, namespace: ${n}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: reader, namespace: ${n}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: task-editor, namespace: ${n}}
rules:
  - {apiGroups: [cronscale.io], resources: [scheduledtasks], verbs: [get, list, watch, create, update, patch, delete]}
  - {apiGroups: [cronscale.io], resources: [taskexecutions], verbs: [get, list, watch, create]}
  - {apiGroups: [""], resources: [secrets], verbs: [get, create, patch, delete]}
  - {apiGroups: [""], resources: [pods], verbs: [get, list]}
  - {apiGroups: [""], resources: [pods/log], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: task-reader, namespace: ${n}}
rules:
  - {apiGroups: [cronscale.io], resources: [scheduledtasks, taskexecutions], verbs: [get, list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: editor, namespace: ${n}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: task-editor}
subjects: [{kind: ServiceAccount, name: editor, namespace: ${n}}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: ${n}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: task-reader}
subjects: [{kind: ServiceAccount, name: reader, namespace: ${n}}]
`;

beforeAll(async () => {
  await installCrds();
  op = await startOperator(ns.name, localTaskConfig({}, ["Bash"]));
  await kubectl(["apply", "-f", "-"], { input: RBAC(ns.name) });
  await waitForRbac(ns.name, "editor", [
    ["create", "scheduledtasks.cronscale.io"],
    ["create", "taskexecutions.cronscale.io"],
  ]);
  for (const who of ["editor", "reader"] as const) {
    tokens[who] = (
      await kubectl(["create", "token", who, "--duration=1h"], { namespace: ns.name })
    ).stdout.trim();
  }
  const kc = kubeConfig();
  app = await createDashboard({
    log: silentLogger(),
    namespaces: [ns.name],
    viewerApi: (token) => new KubeViewerApi(kc, token),
  });
  // localhost: a secure context, where Chromium keeps the Secure session cookie over plain HTTP.
  base = (await app.listen({ host: "127.0.0.1", port: 0 })).replace("127.0.0.1", "localhost");
  chromium = await launchChromium();
  browser = chromium.browser;
}, 600_000);

afterAll(async () => {
  await chromium?.close();
  await app?.close();
  await op?.stop();
});

async function signIn(
  who: keyof typeof tokens,
  scheme: "light" | "dark" = "light",
): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await newContext(browser, scheme);
  const page = await ctx.newPage();
  await page.goto(`${base}${TASKS}?namespace=${ns.name}`);
  expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  await page.getByLabel("Token").fill(tokens[who]);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
  return { ctx, page };
}

async function checkPage(page: Page, name: string): Promise<void> {
  expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
  await screenshots(page, name);
  expect(await phoneOverflow(page), `sideways scroll on ${name} at 390 px`).toBe(0);
  expect(await page.content()).not.toContain(tokens.editor);
}

describe("dashboard in Chromium against the API server", () => {
  it("no page works signed out; a wrong token is refused", async () => {
    for (const path of [TASKS, `${TASKS}/new`, `${TASKS}/${ns.name}/x`, `${TASKS}/${ns.name}/x/edit`]) {
      const r = await fetch(`${base}${path}`, { redirect: "manual" });
      expect(r.status, path).toBe(303);
      expect(r.headers.get("location")).toMatch(/^\/dashboard\/sign-in/);
    }
    const post = await fetch(`${base}${TASKS}/${ns.name}/x/delete`, {
      method: "POST",
      headers: { origin: base },
    });
    expect(post.status).toBe(403);
    const ctx = await newContext(browser);
    const page = await ctx.newPage();
    await page.goto(`${base}/dashboard/sign-in`);
    await checkPage(page, "sign-in");
    await page.getByLabel("Token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("did not accept this token");
    await ctx.close();
  });

  it("an editor creates a Bash task from the form (API messages beside the fields), sees its card, reveals its env value, runs it", async () => {
    const { ctx, page } = await signIn("editor");
    await checkPage(page, "tasks-empty");
    await page.getByRole("link", { name: "New Task" }).click();
    await page.getByLabel("Name", { exact: true }).fill("hello-dash");
    await page.getByLabel("Script").fill('echo "hello $GREETING"');
    await page.getByLabel("Cron expression").fill("0 */2 * * 1-5");
    await page.getByLabel("Time zone").fill("Europe/Paris");
    await expect.poll(() => page.locator("#run-preview").textContent()).toContain("Monday through Friday");
    await page.getByLabel("Name 1").fill("GREETING");
    await page.getByLabel("Value 1").fill("bonjour-secret");
    // The API server's own CEL message, shown next to the field; nothing created.
    await page.getByLabel("Timeout (seconds)").fill("5");
    await page.getByRole("button", { name: "Create Task" }).click();
    await expect
      .poll(() => page.locator("#timeoutSeconds-error").textContent())
      .toMatch(/spec\.timeoutSeconds.*10/);
    expect(await page.getByLabel("Timeout (seconds)").getAttribute("aria-invalid")).toBe("true");
    await checkPage(page, "task-form-errors");
    expect(
      (await kubectl(["get", "stask,secret", "-o", "name"], { namespace: ns.name })).stdout,
    ).not.toContain("hello-dash");
    await page.getByLabel("Timeout (seconds)").fill("60");
    await page.getByLabel("Value 1").fill("bonjour-secret");
    await page.getByRole("button", { name: "Create Task" }).click();
    await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
    await expect.poll(() => page.locator('[data-task="hello-dash"]').count()).toBe(1);
    expect(await page.locator('[data-task="hello-dash"]').textContent()).toContain("Bash");
    await checkPage(page, "tasks");

    // Stored as the viewer created it: the value in a Secret owned by the task, not in the task.
    const task = JSON.parse(
      (await kubectl(["get", "stask", "hello-dash", "-o", "json"], { namespace: ns.name })).stdout,
    );
    expect(task.spec.env).toEqual([
      {
        name: "GREETING",
        valueFrom: { secretKeyRef: { name: "hello-dash-dashboard-env", key: "GREETING" } },
      },
    ]);
    expect(JSON.stringify(task)).not.toContain("bonjour-secret");
    const secret = JSON.parse(
      (await kubectl(["get", "secret", "hello-dash-dashboard-env", "-o", "json"], { namespace: ns.name }))
        .stdout,
    );
    expect(secret.metadata.ownerReferences[0]).toMatchObject({
      kind: "ScheduledTask",
      uid: task.metadata.uid,
    });

    // Search as you type narrows the cards (server-side partial).
    await page.getByLabel("Search by name").fill("nothing-like-this");
    await expect.poll(() => page.locator("[data-task]").count()).toBe(0);
    await page.getByLabel("Search by name").fill("hello");
    await expect.poll(() => page.locator("[data-task]").count()).toBe(1);

    await page.getByRole("link", { name: "hello-dash" }).click();
    await expect.poll(() => page.locator("h1").textContent()).toContain("hello-dash");
    expect(await page.content()).not.toContain("bonjour-secret");
    await page.getByRole("button", { name: "Reveal GREETING" }).click();
    await expect.poll(() => page.getByLabel("Value of GREETING").textContent()).toBe("bonjour-secret");
    await page.getByRole("button", { name: "Run now" }).click();
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Run requested");
    await checkPage(page, "task-detail");
    await waitFor(
      async () => {
        await page.reload();
        return (await page.locator("#h-history ~ * .badge").count()) > 0 ? true : undefined;
      },
      { what: "the run in the history", timeoutMs: 120_000, intervalMs: 2000 },
    );
    const row = await page.locator("#h-history ~ * tbody tr").first().textContent();
    expect(row).toContain("Succeeded");
    expect(row).toContain("Manual");
    await page.locator("#h-history ~ * summary").first().click();
    expect(await page.locator("#h-history ~ * pre").first().textContent()).toContain("hello ****");

    // A POST without the CSRF token is refused, even with the session cookie and our Origin.
    const forged = await page.request.post(`${base}${TASKS}/${ns.name}/hello-dash/delete`, {
      headers: { origin: base },
      form: { confirm: "yes" },
    });
    expect(forged.status()).toBe(403);
    expect(
      (await kubectl(["get", "stask", "hello-dash", "-o", "name"], { namespace: ns.name })).stdout,
    ).toContain("hello-dash");
    await ctx.close();
  });

  it("follows a running run's output live", async () => {
    await kubectl(["apply", "-f", "-"], {
      namespace: ns.name,
      input: JSON.stringify({
        apiVersion: "cronscale.io/v1alpha1",
        kind: "ScheduledTask",
        metadata: { name: "slow-dash" },
        spec: {
          schedule: "0 0 1 1 *",
          language: "Bash",
          plan: "Micro",
          timeoutSeconds: 120,
          script: 'for i in $(seq 1 12); do echo "line $i"; sleep 1; done',
        },
      }),
    });
    const { ctx, page } = await signIn("editor");
    await page.goto(`${base}${TASKS}/${ns.name}/slow-dash`);
    await page.getByRole("button", { name: "Run now" }).click();
    await waitFor(
      async () => {
        await page.reload();
        return (await page.locator("pre[data-sse-log]").count()) > 0 ? true : undefined;
      },
      { what: "the run in progress", timeoutMs: 90_000, intervalMs: 1000 },
    );
    const live = page.locator("pre[data-sse-log]").first();
    await expect.poll(() => live.textContent(), { timeout: 60_000 }).toContain("line 3");
    await expect.poll(() => live.textContent(), { timeout: 60_000 }).toContain("line 6");
    await checkPage(page, "task-running");
    await kubectl(["delete", "stask", "slow-dash", "--wait=false"], { namespace: ns.name });
    await ctx.close();
  });

  it("a read-only viewer sees the task but no create/run/delete/reveal; a forged POST gets the API server's 403", async () => {
    const { ctx, page } = await signIn("reader", "dark");
    expect(await page.locator('[data-task="hello-dash"]').count()).toBe(1);
    expect(await page.getByRole("link", { name: "New Task" }).count()).toBe(0);
    expect(await page.locator("#namespace option").allTextContents()).toEqual([ns.name]);
    await checkPage(page, "tasks-reader-dark");
    await page.getByRole("link", { name: "hello-dash" }).click();
    await expect.poll(() => page.locator("h1").textContent()).toContain("hello-dash");
    for (const name of ["Run now", "Suspend", "Reveal GREETING"])
      expect(await page.getByRole("button", { name }).count(), name).toBe(0);
    for (const name of ["Edit", "Rename…", "Delete…"])
      expect(await page.getByRole("link", { name }).count(), name).toBe(0);
    await checkPage(page, "task-detail-reader-dark");
    // The session's own CSRF token (from the sign-out form), a POST the page does not offer.
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(`${base}${TASKS}/${ns.name}/hello-dash/delete`, {
      headers: { origin: base },
      form: { _csrf: csrf },
    });
    expect(forged.status()).toBe(403);
    expect(await forged.text()).toMatch(/forbidden.*cannot delete/i);
    const reveal = await page.request.post(`${base}${TASKS}/${ns.name}/hello-dash/env/GREETING/reveal`, {
      headers: { origin: base },
      form: { _csrf: csrf },
    });
    expect(reveal.status()).toBe(403);
    expect(await reveal.text()).not.toContain("bonjour-secret");
    await ctx.close();
  });

  it("the editor edits the task and saves (env value kept), renames it with its history, then deletes it after confirming", async () => {
    const { ctx, page } = await signIn("editor");
    await page.goto(`${base}${TASKS}/${ns.name}/hello-dash`);
    await page.getByRole("link", { name: "Edit" }).click();
    await checkPage(page, "task-edit");
    await page.getByLabel("Cron expression").fill("15 3 * * *");
    await page.getByLabel("Plan").selectOption("Small");
    await page.getByRole("button", { name: "Save Changes" }).click();
    await page.waitForURL(`**${TASKS}/${ns.name}/hello-dash`);
    await expect.poll(() => page.getByRole("status").first().textContent()).toContain("Changes saved");
    const task = JSON.parse(
      (await kubectl(["get", "stask", "hello-dash", "-o", "json"], { namespace: ns.name })).stdout,
    );
    expect(task.spec).toMatchObject({ schedule: "15 3 * * *", plan: "Small", timezone: "Europe/Paris" });
    expect(task.spec.env).toHaveLength(1);
    await page.getByRole("button", { name: "Reveal GREETING" }).click();
    await expect.poll(() => page.getByLabel("Value of GREETING").textContent()).toBe("bonjour-secret");

    // Rename: the task under the new name with its history; the old name is gone.
    const before = JSON.parse(
      (
        await kubectl(["get", "texec", "-l", "cronscale.io/task=hello-dash", "-o", "json"], {
          namespace: ns.name,
        })
      ).stdout,
    ).items as { spec: { jobName: string } }[];
    expect(before.length).toBeGreaterThan(0);
    await page.getByRole("link", { name: "Rename…" }).click();
    await page.getByLabel("New name").fill("Hello_Dash");
    await page.getByRole("button", { name: "Rename" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("Nothing was renamed");
    await checkPage(page, "task-rename-error");
    expect(
      JSON.parse((await kubectl(["get", "stask", "hello-dash", "-o", "json"], { namespace: ns.name })).stdout)
        .spec.suspend,
    ).toBe(false);
    await page.getByLabel("New name").fill("hello-renamed");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.waitForURL(`**${TASKS}/${ns.name}/hello-renamed`, { timeout: 60_000 });
    await expect
      .poll(() => page.getByRole("status").first().textContent())
      .toContain(`renamed to hello-renamed; ${before.length} execution record`);
    const history = await page.locator("#h-history ~ * tbody tr").first().textContent();
    expect(history).toContain("Succeeded");
    expect(history).toContain("Manual");
    await page.getByRole("button", { name: "Reveal GREETING" }).click();
    await expect.poll(() => page.getByLabel("Value of GREETING").textContent()).toBe("bonjour-secret");
    await checkPage(page, "task-renamed");
    const after = JSON.parse(
      (
        await kubectl(["get", "texec", "-l", "cronscale.io/task=hello-renamed", "-o", "json"], {
          namespace: ns.name,
        })
      ).stdout,
    ).items as { spec: { jobName: string; taskName: string } }[];
    // The same runs, once each, now under the new name.
    expect(after.map((x) => x.spec.jobName).sort()).toEqual(before.map((x) => x.spec.jobName).sort());
    expect(new Set(after.map((x) => x.spec.taskName))).toEqual(new Set(["hello-renamed"]));
    const renamed = JSON.parse(
      (await kubectl(["get", "stask", "hello-renamed", "-o", "json"], { namespace: ns.name })).stdout,
    );
    expect(renamed.spec).toMatchObject({ schedule: "15 3 * * *", plan: "Small", suspend: false });
    await expect
      .poll(
        async () => (await kubectl(["get", "stask,texec", "-o", "name"], { namespace: ns.name })).stdout,
        {
          timeout: 30_000,
        },
      )
      .not.toMatch(/hello-dash\b/);

    await page.getByRole("link", { name: "Delete…" }).click();
    await checkPage(page, "task-delete-confirm");
    await page.getByRole("button", { name: "Delete hello-renamed" }).click();
    await page.waitForURL(`**${TASKS}?namespace=${ns.name}`);
    expect(await page.locator('[data-task="hello-renamed"]').count()).toBe(0);
    await expect
      .poll(async () => (await kubectl(["get", "stask", "-o", "name"], { namespace: ns.name })).stdout)
      .not.toContain("hello-renamed");
    await ctx.close();
  });
});
