import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sumCosts } from "../../../src/controllers/scheduledtask/billing.ts";
import { useNamespace } from "../../support/cluster.ts";
import { applyTask, getTask, runNow, waitExecutions, waitTask } from "./helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "./operator.ts";

// Billing on real pods: the runner inside each pod times the script in milliseconds and the
// record bills it rounded to the nearest second — 2.4 s → 2, 2.6 s → 3 — in every language, with
// Go's compile step timed apart and not billed. All eight runs go at once.

const ns = useNamespace("stask-bill", { "pod-security.kubernetes.io/enforce": "restricted" });
let op: TestOperator;

beforeAll(async () => {
  await installCrds();
  op = await startOperator(ns.name, localTaskConfig());
}, 900_000);
afterAll(async () => {
  await op?.stop();
});

const SLEEP: Record<string, (ms: number) => string> = {
  Bash: (ms) => `sleep ${ms / 1000}\necho slept\n`,
  Python: (ms) => `import time\ntime.sleep(${ms / 1000})\nprint("slept")\n`,
  Go: (ms) =>
    `package main\n\nimport (\n\t"fmt"\n\t"time"\n)\n\nfunc main() {\n\ttime.Sleep(${ms} * time.Millisecond)\n\tfmt.Println("slept")\n}\n`,
  Bun: (ms) => `await Bun.sleep(${ms});\nconsole.log("slept");\n`,
};
// A whole CPU: on a quarter of one, CFS throttling alone can delay the script's exit by tens of
// milliseconds, and the test is about rounding, not about a crowded node.
const PLAN: Record<string, string> = { Bash: "Medium", Python: "Medium", Go: "Medium", Bun: "Medium" };

describe("billing per execution", () => {
  it("bills 2.4 s as 2 s and 2.6 s as 3 s in all four languages, Go's compile not billed", async () => {
    const cases = Object.keys(SLEEP).flatMap((language) =>
      [2400, 2600].map((ms) => ({ language, ms, name: `bill-${language.toLowerCase()}-${ms}` })),
    );
    await Promise.all(
      cases.map(async (c) => {
        await applyTask(ns.name, c.name, {
          schedule: "0 0 1 1 *",
          language: c.language,
          plan: PLAN[c.language],
          timeoutSeconds: 60,
          script: SLEEP[c.language]?.(c.ms),
        });
        await waitTask(ns.name, c.name, (t) => t.status?.phase === "Running", "Running");
        await runNow(ns.name, c.name, "1");
      }),
    );
    const runs = await Promise.all(
      cases.map(async (c) => (await waitExecutions(ns.name, c.name, () => true, 1, 400_000))[0]),
    );
    for (const [i, c] of cases.entries()) {
      const s = runs[i]?.spec;
      console.log(
        `${c.language} sleep ${c.ms} ms: run ${s?.runMilliseconds} ms, compile ${s?.compileMilliseconds ?? "-"} ms, billed ${s?.billedSeconds} s, ${s?.measuredBy}, cost ${s?.cost} ${s?.currency}`,
      );
      expect(s).toMatchObject({ result: "Succeeded", measuredBy: "Runner", language: c.language });
      expect(s?.output).toContain("slept");
      expect(s?.runMilliseconds).toBeGreaterThanOrEqual(c.ms);
      expect(s?.billedSeconds).toBe(c.ms === 2400 ? 2 : 3);
      expect(s?.durationSeconds).toBe(s?.billedSeconds);
      if (c.language === "Go") {
        expect(s?.compileMilliseconds).toBeGreaterThan(0);
        // The container lived through compile and run; only the run is billed.
        const lived = Date.parse(s?.completionTime ?? "") - Date.parse(s?.startTime ?? "");
        expect(lived).toBeGreaterThanOrEqual(
          (s?.compileMilliseconds ?? 0) + (s?.runMilliseconds ?? 0) - 1000,
        );
      } else expect(s?.compileMilliseconds).toBeUndefined();
    }
    // The task's status: this month's totals equal the sum of its records.
    for (const [i, c] of cases.entries()) {
      const rec = runs[i]?.spec;
      const task = await waitTask(ns.name, c.name, (t) => t.status?.usage?.runs === 1, "usage counted");
      expect(task.status?.usage).toMatchObject({
        runs: 1,
        billedSeconds: rec?.billedSeconds,
        cost: sumCosts([rec?.cost ?? "0"]),
        currency: "USD",
      });
    }
    expect((await getTask(ns.name, "bill-go-2400"))?.status?.usage?.cost).toBe("0.000032"); // 2 s × Medium
  });
});
