import { describe, expect, it } from "vitest";
import { desiredCronJob, desiredManualJob, desiredScriptConfigMap } from "./desired.ts";
import { PYTHON_STARTER, RUNNER_SCRIPT } from "./runtimes.ts";
import { makeTask, TEST_CONFIG } from "./testing.ts";

// biome-ignore lint/suspicious/noExplicitAny: the test reads deep JSON
type Obj = Record<string, any>;

function podSpec(cronJob: Obj): Obj {
  return cronJob.spec.jobTemplate.spec.template.spec;
}

describe("desired children", () => {
  const task = makeTask("nightly", {
    language: "Python",
    script: "print(1)",
    plan: "Small",
    schedule: "0 3 * * 5-7",
    timezone: "Europe/Paris",
    timeoutSeconds: 30,
  });
  const cj = desiredCronJob(task, task.spec, TEST_CONFIG) as Obj;

  it("writes the normalised schedule (no day-of-week 7), the zone and safe defaults", () => {
    expect(cj.spec).toMatchObject({
      schedule: "0 3 * * 5-6,0",
      timeZone: "Europe/Paris",
      concurrencyPolicy: "Forbid",
      suspend: false,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
    });
    expect(cj.metadata.name).toBe("nightly");
    expect(cj.metadata.ownerReferences[0]).toMatchObject({
      kind: "ScheduledTask",
      uid: "uid-nightly",
      controller: true,
    });
  });

  it("runs each execution once, with a deadline of timeout + start-up allowance, and cleans up", () => {
    expect(cj.spec.jobTemplate.spec).toMatchObject({
      backoffLimit: 0,
      activeDeadlineSeconds: 150,
      ttlSecondsAfterFinished: 3600,
    });
  });

  it("runs the script in the runner under timeout -s KILL with the plan as requests = limits", () => {
    const c = podSpec(cj).containers[0];
    expect(c.image).toBe("img/python:1");
    expect(c.command).toEqual([
      "bash",
      "-c",
      RUNNER_SCRIPT,
      "cronscale-runner",
      "/dev/termination-log",
      "/tmp/.cronscale-start",
      "30",
      "",
      "python3",
      "-u",
      "-c",
      PYTHON_STARTER,
      "/task/script.py",
    ]);
    expect(cj.spec.jobTemplate.metadata.annotations).toMatchObject({
      "cronscale.io/task-language": "Python",
      "cronscale.io/task-plan": "Small",
    });
    expect(c.resources).toEqual({
      requests: { cpu: "500m", memory: "512Mi" },
      limits: { cpu: "500m", memory: "512Mi" },
    });
  });

  it("meets Pod Security restricted and mounts no service-account token", () => {
    const p = podSpec(cj);
    expect(p.automountServiceAccountToken).toBe(false);
    expect(p.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(p.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 65532,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(p.volumes.map((v: Obj) => v.name)).toEqual(["script", "tmp"]);
    expect(p.volumes[0].configMap.name).toBe("nightly-script-1");
  });

  it("builds Go before timing it, with a writable build cache", () => {
    const go = makeTask("g", {
      language: "Go",
      script: "package main\nfunc main(){}",
      plan: "Micro",
      timeoutSeconds: 10,
    });
    const c = podSpec(desiredCronJob(go, go.spec, TEST_CONFIG) as Obj).containers[0];
    expect(c.command.slice(0, 2)).toEqual(["bash", "-c"]);
    expect(c.command.slice(6, 7)).toEqual(["10"]);
    expect(c.command[7]).toMatch(/&& go build -o \/tmp\/task \/task\/main\.go$/);
    expect(c.command.slice(8)).toEqual(["/tmp/task"]);
    expect(c.env).toContainEqual({ name: "GOCACHE", value: "/tmp/.cache/go-build" });
    expect(Object.keys((desiredScriptConfigMap(go, go.spec) as Obj).data)).toEqual(["main.go"]);
  });

  it("ships Bun's start-mark preload next to the script and preloads it", () => {
    const bun = makeTask("b", { language: "Bun", script: "console.log(1)", plan: "Micro" });
    expect(Object.keys((desiredScriptConfigMap(bun, bun.spec) as Obj).data)).toEqual([
      "script.ts",
      "cronscale-start.ts",
    ]);
    const c = podSpec(desiredCronJob(bun, bun.spec, TEST_CONFIG) as Obj).containers[0];
    expect(c.command.slice(8)).toEqual([
      "bun",
      "run",
      "--preload",
      "/task/cronscale-start.ts",
      "/task/script.ts",
    ]);
  });

  it("makes run-now Jobs from the same template, labelled Manual, named by the token", () => {
    const job = desiredManualJob(task, task.spec, TEST_CONFIG, "abc") as Obj;
    expect(job.metadata.name).toMatch(/^nightly-m-[0-9a-f]{8}$/);
    expect(job.metadata.labels["cronscale.io/trigger"]).toBe("Manual");
    expect(job.spec.template.metadata.labels["cronscale.io/trigger"]).toBe("Manual");
    expect(job.spec.template.spec).toEqual({ ...podSpec(cj) });
  });

  it("keeps derived names within Kubernetes limits for the longest task name", () => {
    const long = makeTask("a".repeat(52), { language: "Bash", script: "true", plan: "Micro" });
    const job = desiredManualJob(long, long.spec, TEST_CONFIG, "x") as Obj;
    expect(job.metadata.name.length).toBeLessThanOrEqual(63);
    // CronJob names ≤ 52, and the Jobs Kubernetes derives (`<name>-<minutes>`) ≤ 63.
    expect(`${"a".repeat(52)}-${Math.floor(Date.UTC(2100, 0) / 60000)}`.length).toBeLessThanOrEqual(63);
  });
});
