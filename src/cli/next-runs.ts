import { parseArgs } from "node:util";
import { checkScheduleShape } from "../api/v1alpha1/schedule-rules.ts";
import { formatInZone, nextRuns, validateSchedule, validateTimezone } from "../cron/index.ts";

const USAGE = `usage: cronscale next-runs '<expr>' [--timezone <zone>] [--from <ISO time>] [--count N]

Prints the next N run times of a cron expression (ISO 8601 with the zone's offset, one a line),
exactly as the Kubernetes CronJob controller will start them, or the validation error that
kubectl apply would give for the same spec.schedule / spec.timezone.

  --timezone, -z  IANA zone the schedule is evaluated in (default UTC)
  --from          start after this instant (ISO 8601; default now)
  --count, -n     how many run times (1-1000, default 5)`;

/** Output streams and clock, injectable so the command is testable in-process too. */
export interface CliIO {
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
}

/** `cronscale next-runs`: returns the process exit code (0 ok, 1 invalid input, 2 usage). */
export function nextRunsCommand(argv: string[], io: CliIO): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    io.err(`error: ${(e as Error).message}`);
    io.err(USAGE);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    io.err(`error: expected exactly one cron expression (quote it), got ${positionals.length} arguments`);
    io.err(USAGE);
    return 2;
  }
  const expr = positionals[0] ?? "";
  const zone = values.timezone ?? "UTC";
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
  for (const d of nextRuns(expr, zone, from, count)) io.out(formatInZone(d, zone));
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      timezone: { type: "string", short: "z" },
      from: { type: "string" },
      count: { type: "string", short: "n" },
      help: { type: "boolean", short: "h" },
    },
  });
}
