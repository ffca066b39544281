#!/usr/bin/env node
// The package bin: the compiled CLI when the project is built, else the TypeScript source
// (Node >= 24 runs .ts directly, so a plain checkout works without a build).
import { existsSync } from "node:fs";

globalThis.__cronscaleCli = true;
const built = new URL("../dist/cli/main.js", import.meta.url);
await import(existsSync(built) ? built.href : new URL("../src/cli/main.ts", import.meta.url).href);
