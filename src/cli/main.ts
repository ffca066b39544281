import { dashboardCommand } from "../dashboard/command.ts";
import { type CliIO, type Command, packageVersion } from "./common.ts";
import { completeCommand, completionCommand } from "./completion.ts";
import { archiveCommand } from "./history.ts";
import { nextRunsCommand } from "./next-runs.ts";
import { backupCommand, restoreCommand } from "./platforms.ts";
import { runCommand, suspendCommand } from "./tasks.ts";

// `cronscale <command> ...` and `kubectl cronscale <command> ...` (the same bin under the name
// kubectl looks for plugins by). Each subcommand is a function from argv and IO to an exit code,
// so new ones slot into COMMANDS and stay testable.

/** Every command: what it does, and what its positional argument names (for completion). */
export const COMMANDS: Record<string, { run: Command; summary: string; arg?: "task" | "platform" }> = {
  run: { run: runCommand, summary: "run a task now (--wait: wait and print its output)", arg: "task" },
  suspend: { run: suspendCommand("suspend"), summary: "stop a task's schedule", arg: "task" },
  resume: { run: suspendCommand("resume"), summary: "start a task's schedule again", arg: "task" },
  history: {
    run: (a, io, env) => archiveCommand("history", a, io, env),
    summary: "list a task's runs from the archive",
    arg: "task",
  },
  logs: {
    run: (a, io, env) => archiveCommand("logs", a, io, env),
    summary: "print the console output of a task's run",
    arg: "task",
  },
  usage: {
    run: (a, io, env) => archiveCommand("usage", a, io, env),
    summary: "runs, billed seconds and cost per task for a month",
  },
  "next-runs": {
    run: nextRunsCommand,
    summary: "the next run times of a task, or of a cron expression in a zone",
    arg: "task",
  },
  backup: { run: backupCommand, summary: "take a manual backup of a platform", arg: "platform" },
  restore: {
    run: restoreCommand,
    summary: "restore a platform to the latest state, a backup or a point in time",
    arg: "platform",
  },
  completion: { run: (a, io) => completionCommand(a, io), summary: "print a bash or zsh completion script" },
  dashboard: {
    run: dashboardCommand,
    summary: "serve the web dashboard (viewers sign in with a Kubernetes token)",
  },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`);
  return [
    "usage: cronscale <command> [args]        (or: kubectl cronscale <command> [args])",
    "",
    "commands:",
    ...lines,
    "",
    "Every command takes --help. Cluster commands act as the kubeconfig's user (--kubeconfig,",
    "--context, -n), and print data as a table or with -o json|yaml. cronscale --version.",
  ].join("\n");
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[], io: CliIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    (name === undefined ? io.err : io.out)(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "version") {
    io.out(`cronscale ${packageVersion()}`);
    return 0;
  }
  if (name === "__complete") return completeCommand(rest, io, env, COMMANDS);
  const command = COMMANDS[name];
  if (!command) {
    io.err(`error: unknown command "${name}"`);
    io.err(usage());
    return 2;
  }
  return command.run(rest, io, env);
}

const io: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  now: () => new Date(),
};

// Run only when executed (bin/cronscale.js sets the flag), not when imported by tests. The exit
// is explicit: a connection pool kept alive must not hold the process open.
if ((globalThis as { __cronscaleCli?: boolean }).__cronscaleCli) {
  const code = await main(process.argv.slice(2), io);
  if (process.argv[2] === "dashboard") process.exitCode = code;
  else process.stdout.write("", () => process.exit(code));
}
