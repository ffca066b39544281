import { defineConfig } from "vitest/config";

// Two tiers: fast unit tests (pure code, in-memory fakes) and integration tests against a real
// cluster that test/integration/setup/global.ts starts once per run (or KUBECONFIG, if given).
export default defineConfig({
  test: {
    reporters: ["default"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["src/**/*.test.ts", "test/unit/**/*.test.ts", "hack/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/integration/setup/global.ts"],
          testTimeout: 300_000,
          hookTimeout: 600_000,
          // expect.poll's default second is shorter than a page a click navigates to takes on a
          // loaded two-core machine; a poll that waits for something that never comes still fails.
          expect: { poll: { timeout: 15_000 } },
          // Files share one real cluster with two cores; run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
