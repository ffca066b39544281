import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The route table is routes.ts alone: route modules are registered there, never by each other,
// and take their types from context.ts, not from the server that registers them.

const here = import.meta.dirname;
const routeModules = readdirSync(here).filter(
  (f) => (/^routes-.*\.ts$/.test(f) || f === "auth-oidc-routes.ts") && !f.endsWith(".test.ts"),
);
const importsOf = (file: string) =>
  [...readFileSync(join(here, file), "utf8").matchAll(/from "(\.\/[^"]+)"/g)].map((m) => m[1]);

describe("the dashboard's route table", () => {
  it("lists every route module in routes.ts", () => {
    const listed = importsOf("routes.ts");
    expect(routeModules.length).toBeGreaterThan(10);
    for (const f of routeModules) expect(listed, f).toContain(`./${f}`);
  });

  it("has no route module importing server.ts or another route module", () => {
    for (const f of routeModules) {
      const bad = importsOf(f).filter(
        (i) => i === "./server.ts" || i === "./routes.ts" || /^\.\/routes-/.test(i ?? ""),
      );
      expect(bad, f).toEqual([]);
    }
  });
});
