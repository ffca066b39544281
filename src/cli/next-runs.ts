import { API_VERSION } from "../api/v1alpha1/kind.ts";
import { checkScheduleShape } from "../api/v1alpha1/schedule-rules.ts";
import type { ScheduledTask } from "../api/v1alpha1/scheduledtask.ts";
import { formatInZone, nextRuns, validateSchedule, validateTimezone } from "../cron/index.ts";
import { type CliIO, connect, errorText, KUBE_USAGE, parseCommand, printData } from "./common.ts";

export type { CliIO } from "./common.ts";

const USAGE = `usage: cronscale next-runs ('<expr>' [--timezone <zone>] | <task> [-n ns]) [--from <ISO time>] [--count N] [-o json|yaml]

Prints the next N run times of a cron expression (ISO 8601 with the zone's offset, one a line),
exactly as the Kubernetes CronJob controller will start them, or the validation error that
kubectl apply would give for the same spec.schedule / spec.timezone. Given a task's name (one
word, no spaces) instead, it reads that task's spec.schedule and spec.timezone from the cluster.

  -z, --timezone    IANA zone the schedule is evaluated in (default UTC)
      --from        start after this instant (ISO 8601; default now)
  -c, --count       how many run times (1-1000, default 5)
${KUBE_USAGE}`;

/** An argument that names a task rather than a cron expression: one word, no macro. */
const isTaskName = (arg: string) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(arg);

/** `cronscale next-runs`: returns the process exit code (0 ok, 1 invalid input, 2 usage). */
export async function nextRunsCommand(argv: string[], io: CliIO, env: NodeJS.ProcessEnv = process.env) {
  const p = parseCommand(
    argv,
    io,
    USAGE,
    {
      timezone: { type: "string", short: "z" },
      from: { type: "string" },
      count: { type: "string", short: "c" },
    },
    { min: 0, max: 1000, what: "" },
  );
  if (typeof p === "number") return p;
  const { positionals } = p;
  const values = p.values as { timezone?: string; from?: string; count?: string; namespace?: string };
  if (positionals.length !== 1) {
    io.err(`error: expected exactly one cron expression (quote it), got ${positionals.length} arguments`);
    io.err(USAGE);
    return 2;
  }
  let expr = positionals[0] ?? "";
  let zone = values.timezone ?? "UTC";
  if (isTaskName(expr)) {
    if (values.timezone !== undefined) {
      io.err("error: --timezone goes with a cron expression; a task's runs are in its own spec.timezone");
      return 2;
    }
    const name = expr;
    try {
      const k = connect(p.values, env);
      const task = await k.client.get<ScheduledTask>(API_VERSION, "ScheduledTask", k.namespace, name);
      if (!task) {
        io.err(`error: scheduledtask ${name} not found in namespace ${k.namespace}`);
        return 1;
      }
      expr = task.spec.schedule;
      zone = task.spec.timezone ?? "UTC";
    } catch (err) {
      io.err(`error: ${errorText(err)}`);
      return 1;
    }
  } else if (values.namespace !== undefined) {
    io.err("error: -n/--namespace goes with a task's name, not with a cron expression");
    return 2;
  }
  const issues = [...validateSchedule(expr), ...validateTimezone(zone)];
  if (issues.length > 0) {
    // First the words `kubectl apply` prints (the CRD's CEL rule for the schedule), then the
    // cron module's precise reason, which the operator also puts in the task's condition.
    const applyMessage = checkScheduleShape(expr);
    if (applyMessage && !issues.some((i) => i.message === applyMessage)) io.err(applyMessage);
    for (const i of issues) io.err(i.message);
    return 1;
  }
  const count = values.count === undefined ? 5 : Number(values.count);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    io.err(`error: --count must be an integer from 1 to 1000, got "${values.count}"`);
    return 2;
  }
  const from = values.from === undefined ? io.now() : new Date(values.from);
  if (Number.isNaN(from.getTime())) {
    io.err(`error: --from must be an ISO 8601 time such as 2026-03-29T00:00:00Z, got "${values.from}"`);
    return 2;
  }
  const runs = nextRuns(expr, zone, from, count).map((d) => formatInZone(d, zone));
  if (!printData(io, p.output, { schedule: expr, timezone: zone, runs })) for (const r of runs) io.out(r);
  return 0;
}
