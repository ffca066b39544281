import { describe, expect, it } from "vitest";
import type { TaskExecution } from "../api/v1alpha1/taskexecution.ts";
import { ApiError } from "../runtime/errors.ts";
import { renameTask } from "./rename.ts";
import { FakeViewerApi, sampleTask } from "./testing.ts";

const record = (task: string, n: number): TaskExecution =>
  ({
    apiVersion: "cronscale.io/v1alpha1",
    kind: "TaskExecution",
    metadata: {
      name: `${task}-883${n}-${n}`,
      namespace: "default",
      labels: { "cronscale.io/task": task, "app.kubernetes.io/managed-by": "cronscale" },
    },
    spec: { taskName: task, trigger: "Schedule", result: "Succeeded", output: `run ${n}` },
  }) as unknown as TaskExecution;

function world(allow = new Set(["* * *"])) {
  const v = new FakeViewerApi({ username: "e", groups: [] }, allow);
  const task = sampleTask("report", "default", {
    env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "report-dashboard-env", key: "TOKEN" } } }],
  } as never);
  v.tasks.set("default/report", task);
  v.secrets.set("default/report-dashboard-env", {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "report-dashboard-env", namespace: "default" },
    data: { TOKEN: Buffer.from("s3cret").toString("base64") },
  });
  v.executions.push(record("report", 1), record("report", 2), record("other", 3));
  return v;
}
const opts = { settleMs: 50, pollMs: 5 };

describe("renaming a task with its history", () => {
  it("creates the new task from the old spec, moves every record and the env Secret, deletes the old", async () => {
    const v = world();
    expect(await renameTask(v, "default", "report", "daily-report", opts)).toEqual({ copied: 2 });
    expect(v.tasks.has("default/report")).toBe(false);
    const t = v.tasks.get("default/daily-report");
    expect(t?.spec.suspend).toBe(false);
    expect(t?.spec.env?.[0]?.valueFrom?.secretKeyRef.name).toBe("daily-report-dashboard-env");
    const secret = v.secrets.get("default/daily-report-dashboard-env");
    expect(secret?.data?.TOKEN).toBe(Buffer.from("s3cret").toString("base64"));
    expect(secret?.metadata.ownerReferences?.[0]).toMatchObject({
      name: "daily-report",
      uid: "uid-daily-report",
    });
    const moved = v.executions.filter((x) => x.spec.taskName === "daily-report");
    expect(moved.map((x) => x.metadata.name).sort()).toEqual(["daily-report-8831-1", "daily-report-8832-2"]);
    expect(moved[0]?.metadata.labels?.["cronscale.io/task"]).toBe("daily-report");
    expect(moved[0]?.metadata.ownerReferences?.[0]).toMatchObject({ name: "daily-report", controller: true });
    expect(v.executions.filter((x) => x.spec.taskName === "report")).toEqual([]);
    expect(v.executions.filter((x) => x.spec.taskName === "other")).toHaveLength(1);
    // The old task was suspended before anything was created, and the new one created suspended.
    const order = v.calls.filter((c) => /^(patch|create|delete) default\/(report|daily-report)/.test(c));
    expect(order[0]).toBe('patch default/report {"spec":{"suspend":true}}');
    expect(order.at(-1)).toBe('patch default/daily-report {"spec":{"suspend":false}}');
  });

  it("a name the API server refuses changes nothing", async () => {
    const v = world();
    await expect(renameTask(v, "default", "report", "Bad_Name", opts)).rejects.toBeInstanceOf(ApiError);
    expect(v.tasks.get("default/report")?.spec.suspend).toBe(false);
    expect(v.calls.filter((c) => c.startsWith("patch"))).toEqual([]);
  });

  it("refuses while a run is in progress and leaves the old task running", async () => {
    const v = world();
    v.pods.set("report-29-abc", { task: "report", namespace: "default", log: [] });
    await expect(renameTask(v, "default", "report", "daily-report", opts)).rejects.toThrow(/in progress/);
    expect(v.tasks.get("default/report")?.spec.suspend).toBe(false);
    expect(v.tasks.has("default/daily-report")).toBe(false);
  });

  it("undoes everything when the records cannot be moved (no create on taskexecutions)", async () => {
    const allow = new Set(
      ["get", "create", "patch", "delete", "list"].flatMap((verb) =>
        ["scheduledtasks", "secrets", "pods"].map((r) => `${verb} ${r} default`),
      ),
    );
    allow.add("list taskexecutions default");
    const v = world(allow);
    await expect(renameTask(v, "default", "report", "daily-report", opts)).rejects.toThrow(/forbidden/);
    expect(v.tasks.has("default/daily-report")).toBe(false);
    expect(v.secrets.has("default/daily-report-dashboard-env")).toBe(false);
    expect(v.tasks.get("default/report")?.spec.suspend).toBe(false);
    expect(v.executions.filter((x) => x.spec.taskName === "report")).toHaveLength(2);
  });
});
