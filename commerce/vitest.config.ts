import { defineConfig } from "vitest/config";

// One tier: the service against a real PostgreSQL that test/setup/postgres.ts starts once per run
// (a fresh database per test file), real HTTP on 127.0.0.1.
export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/setup/postgres.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
