import { afterEach, describe, expect, it, vi } from "vitest";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import { silentLogger } from "../log.ts";
import { createDashboard } from "./server.ts";
import { FakeViewerApi, injectSignIn, sampleTask } from "./testing.ts";

const TASKS = "/dashboard/compute/serverless/tasks";

/** A viewer whose list calls are counted and can be held back. */
class SlowLister extends FakeViewerApi {
  lists = 0;
  hold: Promise<void> = Promise.resolve();
  override async listTasks(namespace: string): Promise<ScheduledTask[]> {
    this.lists++;
    await this.hold;
    return super.listTasks(namespace);
  }
}

afterEach(() => vi.useRealTimers());

describe("search as you type", () => {
  it("filters the viewer's last list without waiting for the API server, re-reading it in the background once 5 s old", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const viewer = new SlowLister({ username: "v", groups: [] }, new Set(["* * *"]));
    for (const n of ["alpha", "beta", "gamma"]) viewer.tasks.set(`default/${n}`, sampleTask(n));
    const app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
    const { cookie } = await injectSignIn(app, "t", `${TASKS}?namespace=default`);
    const key = (q: string) =>
      app.inject({ method: "GET", url: `${TASKS}/results?namespace=default&q=${q}`, headers: { cookie } });
    const before = viewer.lists;
    expect((await key("al")).body).toContain('data-task="alpha"');
    expect(viewer.lists).toBe(before); // the page's own list, reused

    // 6 s later a new task exists and the API server is slow: the keystroke is answered from
    // the list held, and one background read starts; the next keystroke sees the new task.
    vi.setSystemTime(Date.now() + 6_000);
    viewer.tasks.set("default/alps", sampleTask("alps"));
    let release = () => {};
    viewer.hold = new Promise((r) => {
      release = r;
    });
    const stale = await key("al");
    expect(stale.body).not.toContain('data-task="alps"');
    await key("alp");
    expect(viewer.lists).toBe(before + 1);
    release();
    await new Promise((r) => setImmediate(r));
    expect((await key("alp")).body).toContain('data-task="alps"');
    await app.close();
  });
});
