import { dashboardCommand } from "../dashboard/command.ts";
import { archiveCommand } from "./history.ts";
import { type CliIO, nextRunsCommand } from "./next-runs.ts";

// `cronscale <command> ...`: the package's bin. Each subcommand is a function from argv and IO
// to an exit code, so new ones slot into COMMANDS and stay testable.

type Command = (argv: string[], io: CliIO) => number | Promise<number>;

const COMMANDS: Record<string, { run: Command; summary: string }> = {
  "next-runs": { run: nextRunsCommand, summary: "print the next run times of a cron expression in a zone" },
  history: {
    run: (a, io) => archiveCommand("history", a, io),
    summary: "list a task's runs from the archive",
  },
  logs: {
    run: (a, io) => archiveCommand("logs", a, io),
    summary: "print the console output of a task's run",
  },
  usage: {
    run: (a, io) => archiveCommand("usage", a, io),
    summary: "runs, billed seconds and cost per task for a month",
  },
  dashboard: {
    run: dashboardCommand,
    summary: "serve the web dashboard (viewers sign in with a Kubernetes token)",
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`);
  return ["usage: cronscale <command> [args]", "", "commands:", ...lines].join("\n");
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    (name === undefined ? io.err : io.out)(usage());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`error: unknown command "${name}"`);
    io.err(usage());
    return 2;
  }
  return command.run(rest, io);
}

const io: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  now: () => new Date(),
};

// Run only when executed (bin/cronscale.js sets the flag), not when imported by tests.
if ((globalThis as { __cronscaleCli?: boolean }).__cronscaleCli) {
  process.exitCode = await main(process.argv.slice(2), io);
}
