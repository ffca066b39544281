import { describe, expect, it } from "vitest";
import { API_VERSION } from "../../api/v1alpha1/kind.ts";
import type { ScheduledTask } from "../../api/v1alpha1/scheduledtask.ts";
import { ScheduledTaskReconciler } from "./reconciler.ts";
import { makeCtx, makeTask, TEST_CONFIG } from "./testing.ts";

// Inline env values live in the task itself (plain text in etcd): said by a condition and a
// Warning Event, pointing to valueFrom.secretKeyRef.

const key = { namespace: "ns", name: "hello" };
const base = { language: "Bash" as const, script: "echo hi", plan: "Micro" as const };

async function envCondition(client: ReturnType<typeof makeCtx>["client"]) {
  const t = await client.get<ScheduledTask>(API_VERSION, "ScheduledTask", "ns", "hello");
  return t?.status?.conditions?.find((c) => c.type === "EnvValuesInSecrets");
}

describe("inline env values", () => {
  it("sets EnvValuesInSecrets=False naming the variables, with one Warning Event, until they move to a Secret", async () => {
    const task = makeTask("hello", {
      ...base,
      env: [
        { name: "GREETING", value: "hello" },
        { name: "TOKEN", valueFrom: { secretKeyRef: { name: "api", key: "token" } } },
      ],
    });
    const { ctx, client, events } = makeCtx([task]);
    const r = new ScheduledTaskReconciler(TEST_CONFIG);
    await r.reconcile(key, ctx);
    const cond = await envCondition(client);
    expect(cond).toMatchObject({ status: "False", reason: "InlineEnvValues", observedGeneration: 1 });
    expect(cond?.message).toMatch(/^env GREETING: inline values are stored in plain text/);
    expect(cond?.message).toContain("valueFrom.secretKeyRef");
    expect(events.withReason("InlineEnvValues")).toHaveLength(1);
    expect(events.withReason("InlineEnvValues")[0]?.type).toBe("Warning");

    // Steady: no second Event, no write.
    client.clearWrites();
    await r.reconcile(key, ctx);
    expect(client.writes).toEqual([]);
    expect(events.withReason("InlineEnvValues")).toHaveLength(1);

    const live = (await client.get<ScheduledTask>(
      API_VERSION,
      "ScheduledTask",
      "ns",
      "hello",
    )) as ScheduledTask;
    client.seed({
      ...makeTask(
        "hello",
        {
          ...base,
          env: [{ name: "GREETING", valueFrom: { secretKeyRef: { name: "api", key: "greeting" } } }],
        },
        { generation: 2 },
      ),
      status: live.status,
    });
    await r.reconcile(key, ctx);
    expect(await envCondition(client)).toMatchObject({ status: "True", reason: "AllInSecrets" });
    expect(events.withReason("InlineEnvValues")).toHaveLength(1);
  });
});
