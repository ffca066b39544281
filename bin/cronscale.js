#!/usr/bin/env node
// The package bin: the compiled CLI when the project is built; else the TypeScript source, which
// Node runs directly from 22.18 on. A Node older than the package's `engines` minimum (a system
// Node 20, say) runs neither: the built CLI's dependencies need a newer Node too. It hands over to
// the project's Node 24 (hack/node.sh, which caches it by version), with the same arguments and
// exit code, so `npx cronscale ...` works as the README writes it on any Node.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

globalThis.__cronscaleCli = true;
const built = new URL("../dist/cli/main.js", import.meta.url);
const nodeScript = fileURLToPath(new URL("../hack/node.sh", import.meta.url));

/** Whether this Node meets the package's `engines.node` (">=MAJOR.MINOR"). */
function meetsEngines() {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  const [wantMajor, wantMinor] = String(pkg.engines?.node ?? "")
    .replace(/^>=\s*/, "")
    .split(".")
    .map(Number);
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (!Number.isFinite(wantMajor)) return true;
  return major > wantMajor || (major === wantMajor && minor >= (wantMinor || 0));
}
const supported = meetsEngines();

if (supported && existsSync(built)) await import(built.href);
else if (supported && process.features.typescript)
  await import(new URL("../src/cli/main.ts", import.meta.url).href);
else if (process.env.CRONSCALE_CLI_RELAUNCHED !== "1" && existsSync(nodeScript)) {
  const dir = execFileSync("bash", [nodeScript], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const r = spawnSync(`${dir}/node`, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: "inherit",
    env: { ...process.env, CRONSCALE_CLI_RELAUNCHED: "1" },
  });
  process.exit(r.status ?? 1);
} else {
  process.stderr.write(
    `cronscale: Node ${process.versions.node} is older than this package needs (package.json engines); use Node >= 22.19\n`,
  );
  process.exit(1);
}
