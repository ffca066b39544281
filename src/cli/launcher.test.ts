import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The README's command, as written, on the machine's own Node (the system Node 20 of a fresh
// Debian machine, which cannot run the TypeScript source): the bin hands over to the project's
// Node and prints the same answer.

const repo = fileURLToPath(new URL("../../", import.meta.url));
const SYSTEM_NODE = "/usr/bin/node";
const SYSTEM_NPX = "/usr/bin/npx";
const README_ARGS = ["next-runs", "30 1 * * *", "--timezone", "America/New_York"];
const EXPECTED = "2021-11-07T01:30:00-04:00\n2021-11-07T01:30:00-05:00\n2021-11-08T01:30:00-05:00\n";
// Only the system's directories: `node` is the system Node, not the project's.
const env = { ...process.env, PATH: "/usr/bin:/bin" };

function systemNodeMajor(): number | undefined {
  if (!existsSync(SYSTEM_NODE)) return undefined;
  const r = spawnSync(SYSTEM_NODE, ["-p", "process.versions.node"], { encoding: "utf8" });
  return Number(r.stdout.split(".")[0]);
}
const major = systemNodeMajor();

describe.skipIf(major === undefined)("cronscale on the system Node", { timeout: 120_000 }, () => {
  it(`runs the bin with ${SYSTEM_NODE} (Node ${major})`, () => {
    const r = spawnSync(
      SYSTEM_NODE,
      ["bin/cronscale.js", ...README_ARGS, "--from", "2021-11-06T12:00:00Z", "--count", "3"],
      { cwd: repo, env, encoding: "utf8" },
    );
    expect(r.stderr).not.toMatch(/ERR_UNKNOWN_FILE_EXTENSION/);
    expect(r.stdout).toBe(EXPECTED);
    expect(r.status).toBe(0);
  });

  it.skipIf(!existsSync(SYSTEM_NPX))("the README's `npx cronscale next-runs ...` works as written", () => {
    const r = spawnSync(
      SYSTEM_NPX,
      ["cronscale", ...README_ARGS, "--from", "2021-11-06T12:00:00Z", "--count", "3"],
      { cwd: repo, env, encoding: "utf8" },
    );
    expect(r.stdout).toBe(EXPECTED);
    expect(r.status).toBe(0);
  });

  it("passes the exit code and the error through", () => {
    const r = spawnSync(SYSTEM_NODE, ["bin/cronscale.js", "next-runs", "61 * * * *"], {
      cwd: repo,
      env,
      encoding: "utf8",
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("minute value 61 is out of range 0-59");
  });
});
