import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace } from "../../support/cluster.ts";
import { applyTask, waitTask } from "./helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "./operator.ts";

// A task whose CronJob name is held by someone else's CronJob is refused; the operator's
// informers see only its own objects, so the foreign one going away fires nothing — the refused
// task must still take the name by itself (retries with backoff). No run starts: no image needed.

const ns = useNamespace("stask-conflict");
let op: TestOperator;

beforeAll(async () => {
  await installCrds();
  op = await startOperator(ns.name, localTaskConfig({}, []));
}, 120_000);
afterAll(async () => {
  await op?.stop();
});

describe("a child name held by someone else", () => {
  it("refuses the task with NameConflict, then takes the name once the foreign CronJob is deleted", async () => {
    await kubectl(
      [
        "create",
        "cronjob",
        "taken",
        "--image=cronscale.local/absent:0",
        "--schedule=0 0 1 1 *",
        "--",
        "true",
      ],
      { namespace: ns.name },
    );
    await kubectl(["patch", "cronjob", "taken", "--type=merge", "-p", '{"spec":{"suspend":true}}'], {
      namespace: ns.name,
    });
    await applyTask(ns.name, "taken", {
      schedule: "0 0 1 1 *",
      language: "Bash",
      plan: "Micro",
      script: "true",
    });
    const refused = await waitTask(
      ns.name,
      "taken",
      (t) => t.status?.conditions?.some((c) => c.type === "Ready" && c.reason === "NameConflict") === true,
      "Ready=False/NameConflict",
    );
    expect(refused.status?.phase).toBe("Failed");

    await kubectl(["delete", "cronjob", "taken", "--wait=true"], { namespace: ns.name });
    const running = await waitTask(ns.name, "taken", (t) => t.status?.phase === "Running", "Running", 60_000);
    expect(running.status?.conditions?.find((c) => c.type === "Ready")?.reason).toBe("Scheduled");
    const owner = await kubectl(
      ["get", "cronjob", "taken", "-o", "jsonpath={.metadata.ownerReferences[0].kind}"],
      { namespace: ns.name },
    );
    expect(owner.stdout).toBe("ScheduledTask");
  }, 120_000);
});
