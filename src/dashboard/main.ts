import { dashboardCommand } from "./command.ts";

// The dashboard process of the image (`node dist/dashboard/main.js [flags]`), the same as
// `cronscale dashboard [flags]`.
process.exitCode = await dashboardCommand(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  now: () => new Date(),
});
