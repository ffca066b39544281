import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useNamespace } from "../../support/cluster.ts";
import { applyTask, runNow, waitExecutions, waitTask } from "./helpers.ts";
import { installCrds, localTaskConfig, startOperator, type TestOperator } from "./operator.ts";

// Each language really runs in its pod (images built by hack/images from Debian packages, the Go
// toolchain module and Bun's npm package): reads an env var, writes to stdout and stderr, exits
// with a chosen code.

const ns = useNamespace("stask-lang", { "pod-security.kubernetes.io/enforce": "restricted" });
let op: TestOperator;

beforeAll(async () => {
  await installCrds();
  op = await startOperator(ns.name, localTaskConfig());
}, 900_000);
afterAll(async () => {
  await op?.stop();
});

// "$" kept apart so the TypeScript template of the Bun script stays literal here.
const D = "$";

const SCRIPTS: Record<string, { plan: string; script: string }> = {
  Bash: {
    plan: "Micro",
    script: 'echo "out: $GREETING from bash"\necho "err: bash" >&2\nexit 7\n',
  },
  Python: {
    plan: "Micro",
    script:
      'import os, sys\nprint(f"out: {os.environ[\'GREETING\']} from python {sys.version_info.major}")\nprint("err: python", file=sys.stderr)\nsys.exit(7)\n',
  },
  Go: {
    // Compiling the standard library from a cold cache wants more than a quarter of a CPU.
    plan: "Large",
    script:
      'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Println("out: " + os.Getenv("GREETING") + " from go")\n\tfmt.Fprintln(os.Stderr, "err: go")\n\tos.Exit(7)\n}\n',
  },
  Bun: {
    plan: "Small",
    script: [
      'const who: string = "bun";',
      `console.log(\`out: ${D}{process.env.GREETING} from ${D}{who}\`);`,
      'console.error("err: bun");',
      "process.exit(7);",
      "",
    ].join("\n"),
  },
};

describe("each language runs in its pod", () => {
  it.each(Object.keys(SCRIPTS))("%s: env var in, stdout and stderr out, exit code 7", async (language) => {
    const name = `lang-${language.toLowerCase()}`;
    const s = SCRIPTS[language] as { plan: string; script: string };
    await applyTask(ns.name, name, {
      schedule: "0 0 1 1 *",
      language,
      plan: s.plan,
      timeoutSeconds: 120,
      script: s.script,
      env: [{ name: "GREETING", value: "hello" }],
    });
    await waitTask(ns.name, name, (t) => t.status?.phase === "Running", "Running");
    await runNow(ns.name, name, "1");
    const [run] = await waitExecutions(ns.name, name, () => true, 1, 400_000);
    console.log(`${language}: ${run?.spec.durationSeconds} s, ${run?.spec.result}, ${run?.spec.message}`);
    expect(run?.spec).toMatchObject({ result: "Failed", exitCode: 7, language });
    const who = language === "Python" ? "python 3" : language.toLowerCase();
    // The env value is read (an unset variable would print nothing); an inline value is plain
    // configuration and shows as written.
    expect(run?.spec.output).toContain(`out: hello from ${who}`);
    expect(run?.spec.output).toContain(`err: ${language.toLowerCase()}`);
  });
});
