import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubectl, useNamespace, waitFor } from "../../support/cluster.ts";
import { applyTask, childNames, executions, getTask, runNow, waitExecutions, waitTask } from "./helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "./operator.ts";

// A ScheduledTask from kubectl apply to execution records, with the operator's controllers
// running in this process and every execution running for real on the node.

const ns = useNamespace("stask", { "pod-security.kubernetes.io/enforce": "restricted" });
let op: TestOperator;

beforeAll(async () => {
  await installCrds();
  op = await startOperator(ns.name, localTaskConfig({ maxExecutionsPerTask: 10 }, ["Bash"]));
}, 600_000);
afterAll(async () => {
  await op?.stop();
});

const bash = (script: string, extra: Record<string, unknown> = {}) => ({
  schedule: "0 0 1 1 *",
  language: "Bash",
  plan: "Micro",
  timeoutSeconds: 60,
  script,
  ...extra,
});

describe("ScheduledTask lifecycle", () => {
  // The task every-minute is made first and its scheduled run checked last: its first run comes
  // at the next minute boundary, which the tests in between wait out instead of this one.
  it("goes Pending → Running with its CronJob, its next run at the next minute", async () => {
    const seen = new Set<string>();
    const poll = setInterval(async () => {
      const p = (await getTask(ns.name, "every-minute"))?.status?.phase;
      if (p) seen.add(p);
    }, 100);
    await applyTask(
      ns.name,
      "every-minute",
      bash('echo "tick $CRONSCALE_TASK"; echo "to stderr" >&2', { schedule: "* * * * *" }),
    );
    const t = await waitTask(ns.name, "every-minute", (x) => x.status?.phase === "Running", "Running");
    clearInterval(poll);
    const cj = JSON.parse(
      (await kubectl(["get", "cronjob", "every-minute", "-o", "json"], { namespace: ns.name })).stdout,
    );
    expect(cj.spec.schedule).toBe("* * * * *");
    expect(cj.metadata.ownerReferences[0]).toMatchObject({
      kind: "ScheduledTask",
      name: "every-minute",
      controller: true,
    });
    const next = Date.parse(t.status?.nextRunTime ?? "");
    expect(next % 60_000).toBe(0);
    expect(next - Date.now()).toBeLessThanOrEqual(60_000);
    expect(t.status?.resources).toEqual({ vcpu: "0.25", memory: "256 MB" });
    console.log(`phases observed: ${[...seen].join(" → ")}`);
  });

  it("records a run-now as Manual with output, exit code and duration; newest first", async () => {
    await applyTask(ns.name, "manual", bash('echo "run $(date +%s%N)"; sleep 2; echo err >&2; exit 0'));
    await waitTask(ns.name, "manual", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "manual", "first");
    await waitExecutions(ns.name, "manual", () => true, 1);
    await runNow(ns.name, "manual", "second");
    const list = await waitExecutions(ns.name, "manual", () => true, 2);
    expect(list.every((e) => e.spec.trigger === "Manual" && e.spec.result === "Succeeded")).toBe(true);
    expect(list[0]?.spec.durationSeconds).toBeGreaterThanOrEqual(2);
    expect(list[0]?.spec.output).toMatch(/^run \d+\nerr\n$/);
    // Newest first, as kubectl lists them.
    expect(Date.parse(list[0]?.spec.completionTime ?? "")).toBeGreaterThan(
      Date.parse(list[1]?.spec.completionTime ?? ""),
    );
    const table = await kubectl(["get", "texec", "-l", "cronscale.io/task=manual"], { namespace: ns.name });
    expect(table.stdout).toMatch(/TASK\s+TRIGGER\s+RESULT\s+EXIT\s+DURATION\s+STARTED/);
    expect(table.stdout).toMatch(/manual\s+Manual\s+Succeeded\s+0\s+[23]\s/);
    const described = await kubectl(["describe", "texec", list[0]?.metadata.name ?? ""], {
      namespace: ns.name,
    });
    expect(described.stdout).toContain("Output:");
  });

  it("goes Failed with the exit code of a failing script, and back to Running after a success", async () => {
    await applyTask(ns.name, "failing", bash("echo about to fail; exit 3"));
    await waitTask(ns.name, "failing", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "failing", "1");
    const [run] = await waitExecutions(ns.name, "failing", () => true);
    expect(run?.spec).toMatchObject({
      result: "Failed",
      exitCode: 3,
      reason: "Error",
      message: "exit code 3",
    });
    expect(run?.spec.output).toContain("about to fail");
    await waitTask(
      ns.name,
      "failing",
      (x) => x.status?.phase === "Failed" && x.status.lastResult === "Failed",
      "Failed",
    );
    await applyTask(ns.name, "failing", bash("echo fixed"));
    await runNow(ns.name, "failing", "2");
    await waitTask(
      ns.name,
      "failing",
      (x) => x.status?.phase === "Running" && x.status.lastResult === "Succeeded",
      "Running again",
    );
  });

  it("kills a script at its timeout promptly, even one ignoring SIGTERM, and records TimedOut", async () => {
    await applyTask(
      ns.name,
      "slow",
      bash("trap '' TERM; echo started; sleep 300; echo never", { timeoutSeconds: 10 }),
    );
    await waitTask(ns.name, "slow", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "slow", "1");
    const [run] = await waitExecutions(ns.name, "slow", () => true, 1, 120_000);
    expect(run?.spec).toMatchObject({
      result: "TimedOut",
      reason: "TimedOut",
      message: "timed out after 10 s",
    });
    expect(run?.spec.output).toContain("started");
    expect(run?.spec.output).not.toContain("never");
    // Killed at 10 s, not after a grace period.
    expect(run?.spec.durationSeconds).toBeGreaterThanOrEqual(10);
    expect(run?.spec.durationSeconds).toBeLessThanOrEqual(12);
    await waitTask(ns.name, "slow", (x) => x.status?.phase === "Failed", "Failed after a timeout");
  });

  it("reports a script above its plan's memory as exceeding the plan's memory", async () => {
    // 400 MB in a shell variable, on a 256 MB plan.
    await applyTask(
      ns.name,
      "hungry",
      bash('echo allocating; x=$(head -c 400000000 /dev/zero | tr "\\0" a); echo never'),
    );
    await waitTask(ns.name, "hungry", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "hungry", "1");
    const [run] = await waitExecutions(ns.name, "hungry", () => true);
    expect(run?.spec).toMatchObject({
      result: "Failed",
      reason: "OOMKilled",
      message: "exceeded the plan's memory (256 MB)",
    });
  });

  it("never shows a Secret's value in output, status, Events or operator logs; says where inline values live", async () => {
    const inline = "inline-s3cret-9f8e7d";
    const stored = "stored-s3cret-1a2b3c";
    await kubectl(["create", "secret", "generic", "user-secret", `--from-literal=key=${stored}`], {
      namespace: ns.name,
    });
    await applyTask(
      ns.name,
      "secretive",
      bash('echo "inline=$INLINE stored=$STORED"; echo "$INLINE" >&2', {
        env: [
          { name: "INLINE", value: inline },
          { name: "STORED", valueFrom: { secretKeyRef: { name: "user-secret", key: "key" } } },
        ],
      }),
    );
    await waitTask(ns.name, "secretive", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "secretive", "1");
    const [run] = await waitExecutions(ns.name, "secretive", () => true);
    // stdout and stderr are separate pipes: their lines interleave in arrival order, not write order.
    // The Secret's value is masked; the inline value is written in the task and shows as written.
    expect(run?.spec.output.split("\n").sort()).toEqual(["", inline, `inline=${inline} stored=****`]);
    const task = await getTask(ns.name, "secretive");
    expect(task?.status?.conditions?.find((c) => c.type === "EnvValuesInSecrets")).toMatchObject({
      status: "False",
      reason: "InlineEnvValues",
    });
    const warned = await kubectl(
      [
        "get",
        "events",
        "--field-selector",
        "reason=InlineEnvValues,involvedObject.name=secretive",
        "-o",
        "name",
      ],
      { namespace: ns.name },
    );
    expect(warned.stdout.trim()).not.toBe("");
    const elsewhere = [
      // The task's own spec holds the inline value (the user wrote it there); its status must not.
      JSON.stringify((await getTask(ns.name, "secretive"))?.status),
      (await kubectl(["get", "events", "-o", "json"], { namespace: ns.name })).stdout,
      op.logLines.join(""),
    ].join("\n");
    expect(elsewhere).not.toContain(inline);
    expect(elsewhere).not.toContain(stored);
    expect(JSON.stringify(await executions(ns.name, "secretive"))).not.toContain(stored);
  });

  it("on update, a running execution finishes with the old script and the next uses the new one", async () => {
    await applyTask(
      ns.name,
      "updated",
      bash('echo "v1 start"; sleep 15; cat /task/script.sh | head -1; echo "v1 done"'),
    );
    await waitTask(ns.name, "updated", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "updated", "old");
    await waitFor(
      async () => {
        const r = await kubectl(
          [
            "get",
            "pods",
            "-l",
            "cronscale.io/trigger=Manual,cronscale.io/task=updated",
            "-o",
            "jsonpath={.items[*].status.phase}",
          ],
          {
            namespace: ns.name,
          },
        );
        return r.stdout.includes("Running");
      },
      { timeoutMs: 60_000, what: "the v1 pod running" },
    );
    await applyTask(ns.name, "updated", bash('echo "v2 only"'));
    await runNow(ns.name, "updated", "new");
    const list = await waitExecutions(ns.name, "updated", () => true, 2);
    const old = list.find((e) => e.spec.output.includes("v1 start"));
    const next = list.find((e) => e.spec.output.includes("v2 only"));
    expect(old?.spec.output).toContain("v1 done");
    expect(old?.spec.output).toContain('echo "v1 start"');
    expect(old?.spec.configRevision).toBe("1");
    expect(next?.spec.configRevision).toBe("2");
    const cj = JSON.parse(
      (await kubectl(["get", "cronjob", "updated", "-o", "json"], { namespace: ns.name })).stdout,
    );
    expect(cj.spec.jobTemplate.spec.template.spec.volumes[0].configMap.name).toBe("updated-script-2");
  });

  it("writes nothing at steady state (children and status compared with the live objects)", async () => {
    await applyTask(ns.name, "steady", bash("true", { env: [{ name: "A", value: "abcd" }] }));
    await waitTask(ns.name, "steady", (x) => x.status?.phase === "Running", "Running");
    await new Promise((r) => setTimeout(r, 3000));
    const writes = () =>
      op.logLines.filter((l) => l.includes('"task":"steady"') && l.includes("applied child")).length;
    const before = writes();
    const rvs = async () =>
      (
        await kubectl(
          [
            "get",
            "cronjob,configmap,secret",
            "-l",
            "cronscale.io/task=steady",
            "-o",
            "jsonpath={.items[*].metadata.resourceVersion}",
          ],
          {
            namespace: ns.name,
          },
        )
      ).stdout;
    type Managed = { manager: string; subresource?: string; time: string };
    const statusWrite = async () => {
      const fields = ((await getTask(ns.name, "steady"))?.metadata.managedFields ?? []) as Managed[];
      return JSON.stringify(fields.find((m) => m.manager === "cronscale" && m.subresource === "status"));
    };
    const [children, status] = [await rvs(), await statusWrite()];
    // Touching the task (not its spec) makes the controller look again.
    await kubectl(["annotate", "--overwrite", "stask", "steady", "poke=1"], { namespace: ns.name });
    await new Promise((r) => setTimeout(r, 5000));
    expect(writes()).toBe(before);
    expect(before).toBe(3); // ConfigMap, Secret, CronJob, once each
    expect(await rvs()).toBe(children);
    expect(await statusWrite()).toBe(status);
  });

  it("suspends (Stopped) and resumes (Running)", async () => {
    await applyTask(ns.name, "pausable", bash("true"));
    await waitTask(ns.name, "pausable", (x) => x.status?.phase === "Running", "Running");
    await kubectl(["patch", "stask", "pausable", "--type=merge", "-p", '{"spec":{"suspend":true}}'], {
      namespace: ns.name,
    });
    const stopped = await waitTask(ns.name, "pausable", (x) => x.status?.phase === "Stopped", "Stopped");
    expect(stopped.status?.nextRunTime).toBeUndefined();
    const cj = await kubectl(["get", "cronjob", "pausable", "-o", "jsonpath={.spec.suspend}"], {
      namespace: ns.name,
    });
    expect(cj.stdout).toBe("true");
    await kubectl(["patch", "stask", "pausable", "--type=merge", "-p", '{"spec":{"suspend":false}}'], {
      namespace: ns.name,
    });
    const resumed = await waitTask(ns.name, "pausable", (x) => x.status?.phase === "Running", "Running");
    expect(resumed.status?.nextRunTime).toBe("2027-01-01T00:00:00Z");
  });

  it("deletes every child with the task", async () => {
    await applyTask(ns.name, "doomed", bash("echo bye", { env: [{ name: "A", value: "1234" }] }));
    await waitTask(ns.name, "doomed", (x) => x.status?.phase === "Running", "Running");
    await runNow(ns.name, "doomed", "1");
    await waitExecutions(ns.name, "doomed", () => true);
    await kubectl(["delete", "stask", "doomed"], { namespace: ns.name });
    await waitFor(
      async () => {
        for (const kind of ["cronjob", "job", "configmap", "secret", "pod", "texec"]) {
          if ((await childNames(ns.name, kind, "doomed")).length > 0) return false;
        }
        return true;
      },
      { timeoutMs: 90_000, what: "every child of doomed gone" },
    );
  });

  it("deletes records past 7 days and beyond the per-task limit", async () => {
    await applyTask(ns.name, "chatty", bash("true"));
    const t = await waitTask(ns.name, "chatty", (x) => x.status?.phase === "Running", "Running");
    const owner = {
      apiVersion: "cronscale.io/v1alpha1",
      kind: "ScheduledTask",
      name: "chatty",
      uid: t.metadata.uid,
      controller: true,
    };
    const record = (i: number, completion: Date, expires: Date) => ({
      apiVersion: "cronscale.io/v1alpha1",
      kind: "TaskExecution",
      metadata: {
        name: `chatty-old-${i}`,
        labels: { "cronscale.io/task": "chatty", "app.kubernetes.io/managed-by": "cronscale" },
        ownerReferences: [owner],
      },
      spec: {
        taskName: "chatty",
        trigger: "Schedule",
        jobName: `chatty-${i}`,
        language: "Bash",
        plan: "Micro",
        completionTime: completion.toISOString().replace(/\.\d+Z/, "Z"),
        durationSeconds: 1,
        result: "Succeeded",
        reason: "Completed",
        message: "exit code 0",
        output: "x",
        expiresAt: expires.toISOString().replace(/\.\d+Z/, "Z"),
      },
    });
    const day = 86_400_000;
    const now = Date.now();
    const docs = [
      ...[0, 1].map((i) => record(i, new Date(now - 8 * day - i * 1000), new Date(now - day - i * 1000))),
      ...Array.from({ length: 12 }, (_, i) =>
        record(10 + i, new Date(now - (i + 1) * 60_000), new Date(now + 6 * day)),
      ),
    ];
    await kubectl(["apply", "-f", "-"], {
      namespace: ns.name,
      input: docs.map((d) => JSON.stringify(d)).join("\n"),
    });
    // Anything touching the task wakes it up; the records' own creation does not need to.
    await kubectl(["annotate", "--overwrite", "stask", "chatty", "poke=1"], { namespace: ns.name });
    const left = await waitFor(
      async () => {
        const names = (await executions(ns.name, "chatty")).map((e) => e.metadata.name ?? "");
        return names.length === 10 ? names : undefined;
      },
      { timeoutMs: 60_000, what: "retention to leave 10 records" },
    );
    expect(left).not.toContain("chatty-old-0");
    expect(left).not.toContain("chatty-old-1");
    // The two oldest of the twelve young records went too (limit 10 per task).
    expect(left).not.toContain("chatty-old-20");
    expect(left).not.toContain("chatty-old-21");
  });

  it("runs on schedule (trigger Schedule): the task made by the first test", async () => {
    const [run] = await waitExecutions(
      ns.name,
      "every-minute",
      (e) => e.spec.trigger === "Schedule",
      1,
      150_000,
    );
    expect(run?.spec).toMatchObject({ result: "Succeeded", exitCode: 0, trigger: "Schedule" });
    expect(run?.spec.output).toContain("tick every-minute");
    expect(run?.spec.output).toContain("to stderr");
    expect(run?.spec.durationSeconds).toBeLessThan(10);
    const after = await waitTask(
      ns.name,
      "every-minute",
      (x) => x.status?.lastResult === "Succeeded",
      "lastResult",
    );
    expect(after.status?.lastRunTime).toBeDefined();
    const shown = await kubectl(["get", "stask", "every-minute"], { namespace: ns.name });
    expect(shown.stdout).toMatch(
      /SCHEDULE\s+TIMEZONE\s+LANGUAGE\s+PLAN\s+STATUS\s+LAST RUN\s+NEXT RUN\s+AGE/,
    );
    await kubectl(["delete", "stask", "every-minute", "--wait=false"], { namespace: ns.name });
  });
});
