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
          // Files share one real cluster with two cores; run them one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
