import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../log.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, sampleTask } from "./testing.ts";

const TASKS = "/dashboard/compute/serverless/tasks";
const ORIGIN = "http://dash.test";
const TOKEN = "token-of-the-viewer-0123456789";

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A dashboard whose only known token is TOKEN, acting as `viewer`. */
async function start(viewer: FakeViewerApi) {
  app = await createDashboard({
    log: silentLogger(),
    viewerApi: (token) => (token === TOKEN ? viewer : new FakeViewerApi(undefined, new Set())),
    now: () => new Date("2026-01-05T10:00:00Z"),
  });
  return app;
}

const cookieOf = (res: { headers: Record<string, unknown> }) =>
  String(res.headers["set-cookie"] ?? "").split(";")[0] ?? "";
const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";

/** Signs in through the form; returns the session cookie and the CSRF token of `page`. */
async function signIn(a: FastifyInstance, page = TASKS) {
  const form = await a.inject({ method: "GET", url: "/dashboard/sign-in" });
  const pre = cookieOf(form);
  const res = await a.inject({
    method: "POST",
    url: "/dashboard/sign-in",
    headers: { cookie: pre, origin: ORIGIN, host: "dash.test" },
    payload: { _csrf: csrfOf(form.body), token: TOKEN, next: page },
  });
  expect(res.statusCode).toBe(303);
  const cookie = cookieOf(res);
  expect(cookie).not.toBe(pre); // a new session id at sign-in
  const got = await a.inject({ method: "GET", url: page, headers: { cookie } });
  return { cookie, csrf: csrfOf(got.body), page: got };
}

const post = (a: FastifyInstance, url: string, cookie: string, payload: Record<string, string | string[]>) =>
  a.inject({ method: "POST", url, headers: { cookie, origin: ORIGIN, host: "dash.test" }, payload });

const admin = () => new FakeViewerApi({ username: "alice", groups: [] }, new Set(["* * *"]));

describe("dashboard: signing in", () => {
  it("sends every page to sign-in when signed out, and refuses partials and posts", async () => {
    const a = await start(admin());
    const page = await a.inject({ method: "GET", url: `${TASKS}?q=x` });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(`/dashboard/sign-in?next=${encodeURIComponent(`${TASKS}?q=x`)}`);
    const partial = await a.inject({ method: "GET", url: `${TASKS}/results`, headers: { "x-partial": "1" } });
    expect(partial.statusCode).toBe(401);
    const detail = await a.inject({ method: "GET", url: `${TASKS}/default/a` });
    expect(detail.statusCode).toBe(303);
    const forged = await a.inject({
      method: "POST",
      url: `${TASKS}/default/a/run`,
      headers: { origin: ORIGIN, host: "dash.test" },
    });
    expect(forged.statusCode).toBe(403);
  });

  it("accepts a token the API server accepts, with a hardened session cookie; refuses others", async () => {
    const a = await start(admin());
    const form = await a.inject({ method: "GET", url: "/dashboard/sign-in" });
    expect(form.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(String(form.headers["set-cookie"])).toMatch(/HttpOnly/);
    expect(String(form.headers["set-cookie"])).toMatch(/Secure/);
    expect(String(form.headers["set-cookie"])).toMatch(/SameSite=Strict/);
    const bad = await post(a, "/dashboard/sign-in", cookieOf(form), {
      _csrf: csrfOf(form.body),
      token: "wrong",
    });
    expect(bad.statusCode).toBe(401);
    expect(bad.body).toContain("did not accept this token");
    const { page } = await signIn(a);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("alice");
    expect(page.body).not.toContain(TOKEN);
  });

  it("refuses a state change without the CSRF token or from another origin", async () => {
    const viewer = admin();
    viewer.tasks.set("default/a", sampleTask("a"));
    const a = await start(viewer);
    const { cookie, csrf } = await signIn(a);
    const noToken = await post(a, `${TASKS}/default/a/run`, cookie, {});
    expect(noToken.statusCode).toBe(403);
    const otherOrigin = await a.inject({
      method: "POST",
      url: `${TASKS}/default/a/run`,
      headers: { cookie, origin: "http://evil.test", host: "dash.test" },
      payload: { _csrf: csrf },
    });
    expect(otherOrigin.statusCode).toBe(403);
    expect(viewer.calls.filter((c) => c.startsWith("patch"))).toEqual([]);
    const ok = await post(a, `${TASKS}/default/a/run`, cookie, { _csrf: csrf });
    expect(ok.statusCode).toBe(303);
    expect(viewer.calls.some((c) => c.includes("cronscale.io/run-now"))).toBe(true);
  });

  it("signs out: the session is gone", async () => {
    const a = await start(admin());
    const { cookie, csrf } = await signIn(a);
    expect((await post(a, "/dashboard/sign-out", cookie, { _csrf: csrf })).statusCode).toBe(303);
    expect((await a.inject({ method: "GET", url: TASKS, headers: { cookie } })).statusCode).toBe(303);
  });
});

describe("dashboard: tasks", () => {
  it("lists cards with schedule reading and escapes what users wrote", async () => {
    const viewer = admin();
    viewer.tasks.set(
      "default/backup",
      sampleTask("backup", "default", { script: 'echo "<script>alert(1)</script>"' }),
    );
    viewer.tasks.set("default/report", sampleTask("report", "default", { schedule: "0 9 * * 1-5" }));
    const a = await start(viewer);
    const { cookie, page } = await signIn(a);
    expect(page.body).toContain("Every 5 minutes");
    expect(page.body).toContain("At 09:00, Monday through Friday");
    expect(page.body).toContain("New Task");
    const narrowed = await a.inject({
      method: "GET",
      url: `${TASKS}/results?q=REP&namespace=default`,
      headers: { cookie, "x-partial": "1" },
    });
    expect(narrowed.body).toContain('data-task="report"');
    expect(narrowed.body).not.toContain('data-task="backup"');
    expect(narrowed.body).not.toContain("<html");
    const detail = await a.inject({ method: "GET", url: `${TASKS}/default/backup`, headers: { cookie } });
    expect(detail.body).toContain("&lt;script>alert(1)&lt;/script>");
    expect(detail.body).not.toContain("<script>alert(1)");
  });

  it("shows at most 100 cards and says how many matched", async () => {
    const viewer = admin();
    for (let i = 0; i < 150; i++)
      viewer.tasks.set(`default/t-${i}`, sampleTask(`t-${String(i).padStart(3, "0")}`));
    const a = await start(viewer);
    const { page } = await signIn(a);
    expect(page.body.match(/data-task=/g)).toHaveLength(100);
    expect(page.body).toContain("150 tasks; showing the first 100 by name, type more to narrow");
  });

  it("hides what a read-only viewer may not do, and shows the API server's 403 for a forged post", async () => {
    const viewer = new FakeViewerApi(
      { username: "system:serviceaccount:team:reader", groups: [] },
      new Set(["list scheduledtasks team", "get scheduledtasks team", "list taskexecutions team"]),
    );
    viewer.tasks.set(
      "team/a",
      sampleTask("a", "team", {
        env: [{ name: "KEY", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }],
      }),
    );
    const a = await start(viewer);
    const { cookie, csrf, page } = await signIn(a, `${TASKS}?namespace=team`);
    expect(page.body).not.toContain("New Task");
    expect(page.body).toMatch(/<option value="team" selected/);
    expect(page.body).not.toContain('<option value="default"');
    const detail = await a.inject({ method: "GET", url: `${TASKS}/team/a`, headers: { cookie } });
    expect(detail.statusCode).toBe(200);
    for (const control of ["Run now", "Suspend", "Delete", "Reveal", "Edit"])
      expect(detail.body).not.toContain(control);
    const forged = await post(a, `${TASKS}/team/a/delete`, cookie, { _csrf: csrf });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain("cannot delete");
    const reveal = await post(a, `${TASKS}/team/a/env/KEY/reveal`, cookie, { _csrf: csrf });
    expect(reveal.statusCode).toBe(403);
    expect(viewer.tasks.has("team/a")).toBe(true);
  });

  it("creates a task with env values in an owned Secret, and returns to the list", async () => {
    const viewer = admin();
    const a = await start(viewer);
    const { cookie, csrf } = await signIn(a, `${TASKS}/new?namespace=default`);
    const res = await post(a, `${TASKS}/new?namespace=default`, cookie, {
      _csrf: csrf,
      intent: "save",
      name: "nightly",
      language: "Bash",
      script: "echo $GREETING",
      schedule: "0 2 * * *",
      timezone: "Europe/Paris",
      plan: "Small",
      timeoutSeconds: "60",
      concurrencyPolicy: "Forbid",
      retries: "1",
      startingDeadlineSeconds: "",
      successfulJobsHistoryLimit: "3",
      failedJobsHistoryLimit: "3",
      env_name: ["GREETING", ""],
      env_value: ["bonjour", ""],
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${TASKS}?namespace=default`);
    const task = viewer.tasks.get("default/nightly");
    expect(task?.spec).toMatchObject({
      schedule: "0 2 * * *",
      timezone: "Europe/Paris",
      plan: "Small",
      timeoutSeconds: 60,
      retries: 1,
    });
    expect(task?.spec.env).toEqual([
      { name: "GREETING", valueFrom: { secretKeyRef: { name: "nightly-dashboard-env", key: "GREETING" } } },
    ]);
    expect(JSON.stringify(task)).not.toContain("bonjour");
    const secret = viewer.secrets.get("default/nightly-dashboard-env");
    expect(Buffer.from(secret?.data?.GREETING ?? "", "base64").toString()).toBe("bonjour");
    expect(secret?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "ScheduledTask",
      name: "nightly",
      uid: "uid-nightly",
    });
    // Dry run first, the Secret before the task.
    expect(viewer.calls.slice(0, 3)).toEqual([
      "create dry-run default/nightly",
      "create secret default/nightly-dashboard-env",
      "create default/nightly",
    ]);
    const list = await a.inject({ method: "GET", url: res.headers.location as string, headers: { cookie } });
    expect(list.body).toContain("Task nightly created.");
    expect(list.body).toContain('data-task="nightly"');
  });

  it("shows the API server's validation message next to the field, nothing created", async () => {
    const viewer = admin();
    const a = await start(viewer);
    const { cookie, csrf } = await signIn(a, `${TASKS}/new?namespace=default`);
    const res = await post(a, `${TASKS}/new?namespace=default`, cookie, {
      _csrf: csrf,
      intent: "save",
      name: "ok-name",
      language: "Bash",
      script: "echo",
      schedule: "* * *",
      timezone: "UTC",
      plan: "Micro",
    });
    expect(res.statusCode).toBe(422);
    expect(res.body).toMatch(/id="schedule-error">spec\.schedule must have exactly five fields/);
    expect(res.body).toMatch(/id="schedule"[^>]*aria-invalid="true"/);
    expect(res.body).toContain('value="ok-name"');
    expect(viewer.tasks.size).toBe(0);
    expect(viewer.secrets.size).toBe(0);
  });

  it("previews the next five runs in the chosen zone", async () => {
    const a = await start(admin());
    const { cookie } = await signIn(a);
    const res = await a.inject({
      method: "GET",
      url: `${TASKS}/preview?schedule=30%201%20*%20*%20*&timezone=America/New_York`,
      headers: { cookie, "x-partial": "1" },
    });
    expect(res.body).toContain("<li>2026-01-06 01:30:00 -05:00</li>"); // 10:00Z is 05:00 in New York
    expect(res.body.match(/<li>/g)).toHaveLength(5);
    const bad = await a.inject({
      method: "GET",
      url: `${TASKS}/preview?schedule=61%20*%20*%20*%20*&timezone=UTC`,
      headers: { cookie },
    });
    expect(bad.body).toContain("minute");
  });

  it("reveals one env value on a POST, not cached, and only to a viewer who may read the Secret", async () => {
    const viewer = admin();
    viewer.tasks.set(
      "default/a",
      sampleTask("a", "default", {
        env: [{ name: "TOKEN_X", valueFrom: { secretKeyRef: { name: "s", key: "k" } } }],
      }),
    );
    viewer.secrets.set("default/s", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s" },
      data: { k: Buffer.from("hunter22").toString("base64") },
    });
    const a = await start(viewer);
    const { cookie, csrf } = await signIn(a, `${TASKS}/default/a`);
    const detail = await a.inject({ method: "GET", url: `${TASKS}/default/a`, headers: { cookie } });
    expect(detail.body).not.toContain("hunter22");
    expect(detail.body).toContain("Reveal");
    const res = await post(a, `${TASKS}/default/a/env/TOKEN_X/reveal`, cookie, { _csrf: csrf });
    expect(res.statusCode).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
    expect(res.body).toContain("hunter22");
  });

  it("suspends, resumes and deletes through the viewer's client", async () => {
    const viewer = admin();
    viewer.tasks.set("default/a", sampleTask("a"));
    const a = await start(viewer);
    const { cookie, csrf } = await signIn(a, `${TASKS}/default/a`);
    await post(a, `${TASKS}/default/a/suspend`, cookie, { _csrf: csrf });
    expect(viewer.tasks.get("default/a")?.spec.suspend).toBe(true);
    const page = await a.inject({ method: "GET", url: `${TASKS}/default/a`, headers: { cookie } });
    expect(page.body).toContain("Resume");
    const confirm = await a.inject({ method: "GET", url: `${TASKS}/default/a/delete`, headers: { cookie } });
    expect(confirm.body).toContain("Delete task a?");
    const del = await post(a, `${TASKS}/default/a/delete`, cookie, { _csrf: csrf });
    expect(del.statusCode).toBe(303);
    expect(viewer.tasks.has("default/a")).toBe(false);
  });

  it("follows a running run's output over Server-Sent Events, only for viewers who may read logs and Secrets", async () => {
    const viewer = admin();
    viewer.tasks.set("default/a", sampleTask("a"));
    viewer.pods.set("a-m-1234-x", { task: "a", namespace: "default", log: ["line 1\n", "line 2\n"] });
    const a = await start(viewer);
    const { cookie } = await signIn(a, `${TASKS}/default/a`);
    const page = await a.inject({ method: "GET", url: `${TASKS}/default/a`, headers: { cookie } });
    expect(page.body).toContain(`data-sse-log="${TASKS}/default/a/runs/a-m-1234-x/log"`);
    const stream = await a.inject({
      method: "GET",
      url: `${TASKS}/default/a/runs/a-m-1234-x/log`,
      headers: { cookie },
    });
    expect(stream.headers["content-type"]).toContain("text/event-stream");
    expect(stream.body).toBe(
      "event: log\ndata: line 1\ndata: \n\nevent: log\ndata: line 2\ndata: \n\nevent: end\ndata: \n\n",
    );
    const other = await a.inject({
      method: "GET",
      url: `${TASKS}/default/b/runs/a-m-1234-x/log`,
      headers: { cookie },
    });
    expect(other.statusCode).toBe(404);

    const reader = new FakeViewerApi(
      { username: "r", groups: [] },
      new Set([
        "get scheduledtasks default",
        "list taskexecutions default",
        "list pods default",
        "get pods/log default",
      ]),
    );
    reader.tasks.set("default/a", sampleTask("a"));
    reader.pods.set("a-m-1234-x", { task: "a", namespace: "default", log: [] });
    await a.close();
    const b = await start(reader);
    const r = await signIn(b, `${TASKS}/default/a`);
    expect(r.page.body).not.toContain("data-sse-log"); // no Secret access: the raw log is not offered
  });
});
