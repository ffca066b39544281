import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// Controllers share code through src/runtime (generic) or a lower layer, never in a cycle:
// taskexecution builds on scheduledtask (the task, its config, billing and history policy);
// scaleplatform is on its own; tasks.ts wires the two task controllers together.
const ALLOWED: Record<string, string[]> = {
  scaleplatform: [],
  scheduledtask: [],
  taskexecution: ["scheduledtask"],
};

const root = resolve(import.meta.dirname);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("controller layering", () => {
  it("no controller imports another except along the allowed layers", () => {
    const bad: string[] = [];
    for (const [ctrl, allowed] of Object.entries(ALLOWED)) {
      for (const file of sources(join(root, ctrl))) {
        for (const m of readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)) {
          const target = relative(root, resolve(dirname(file), m[1]!));
          if (target.startsWith("..")) continue; // outside src/controllers (runtime, api, ...)
          const top = target.split("/")[0]!;
          if (top !== ctrl && !allowed.includes(top)) bad.push(`${relative(root, file)} → ${target}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });
});
