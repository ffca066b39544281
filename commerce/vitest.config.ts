import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// One tier: the service against a real PostgreSQL that test/setup/postgres.ts starts once per run
// (a fresh database per test file), real HTTP on 127.0.0.1.
export default defineConfig({
  resolve: {
    // graphql ships CommonJS and ESM builds; Node (and mercurius) load the CommonJS one, while
    // Vite would pick the ESM one for our imports: two copies of graphql's classes. Use one.
    alias: [
      {
        find: /^graphql$/,
        replacement: fileURLToPath(new URL("./node_modules/graphql/index.js", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/setup/postgres.ts", "test/setup/stripe-mock.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
