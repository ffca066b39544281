import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { controllerLogger, createLogger, reconcileLogger, SecretRegistry } from "./log.ts";

let secrets = new SecretRegistry();
/** Registers values under a scope of their own (the rules do not depend on scopes). */
const registerSecretValue = (v: string) => secrets.set(`scope-${v}`, [v]);
const redactSecrets = (text: string) => secrets.redact(text);

function capture() {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      cb();
    },
  });
  return { lines, log: createLogger({ level: "debug", destination: dest, secrets }) };
}

afterEach(() => {
  secrets = new SecretRegistry();
});

describe("logger", () => {
  it("writes JSON with a fixed message, fields, controller and reconcile id", () => {
    const { lines, log } = capture();
    reconcileLogger(controllerLogger(log, "scheduledtask"), "rid-1", "ns", "t").info(
      { nextRun: "x" },
      "applied CronJob",
    );
    const rec = JSON.parse(lines[0]!);
    expect(rec).toMatchObject({
      level: "info",
      msg: "applied CronJob",
      controller: "scheduledtask",
      reconcileId: "rid-1",
      namespace: "ns",
      name: "t",
      nextRun: "x",
    });
  });

  it("makes a reconcile's child logger only when a line is written at an enabled level", () => {
    const { lines, log } = capture();
    const controller = controllerLogger(log, "scheduledtask");
    let children = 0;
    const child = controller.child.bind(controller);
    controller.child = ((...a: Parameters<typeof child>) => {
      children++;
      return child(...a);
    }) as typeof controller.child;
    const rl = reconcileLogger(controller, "rid-2", "ns", "t");
    rl.trace({}, "not written");
    expect(children).toBe(0);
    expect(rl.isLevelEnabled("debug")).toBe(true);
    rl.debug({ n: 1 }, "first");
    rl.warn({ n: 2 }, "second");
    expect(children).toBe(1);
    expect(lines.map((l) => JSON.parse(l))).toMatchObject([
      { level: "debug", msg: "first", reconcileId: "rid-2", n: 1 },
      { level: "warn", msg: "second", reconcileId: "rid-2", name: "t", n: 2 },
    ]);
    rl.level = "error";
    rl.warn({}, "off now");
    expect(lines).toHaveLength(2);
  });

  it("masks registered secret values anywhere in the line", () => {
    const { lines, log } = capture();
    registerSecretValue("hunter2-very-secret");
    log.info({ env: { DB_PASSWORD_VALUE: "hunter2-very-secret" } }, "starting with hunter2-very-secret");
    expect(lines[0]).not.toContain("hunter2");
    expect(lines[0]).toContain("[REDACTED]");
  });

  it("masks a short value (4-7 chars) as a whole token: JSON strings, KEY=value, URLs, output text", () => {
    const { lines, log } = capture();
    registerSecretValue("hello");
    log.info(
      {
        value: "hello",
        env: "PASSWORD=hello",
        url: "postgres://app:hello@127.0.0.1:5432/db",
        output: "start\nhello\n\thello\u001bhello done",
      },
      "the password is hello.",
    );
    const rec = JSON.parse(lines[0] ?? "{}");
    expect(rec.value).toBe("[REDACTED]");
    expect(rec.env).toBe("PASSWORD=[REDACTED]");
    expect(rec.url).toBe("postgres://app:[REDACTED]@127.0.0.1:5432/db");
    expect(rec.output).toBe("start\n[REDACTED]\n\t[REDACTED]\u001b[REDACTED] done");
    expect(rec.msg).toBe("the password is [REDACTED].");
    expect(lines[0]).not.toMatch(/hello/);
  });

  it("leaves a short value alone where it is part of a longer name (hello-bash, hello.sh, hello_world)", () => {
    const { lines, log } = capture();
    registerSecretValue("hello");
    log.info({ task: "hello-bash", file: "hello.sh", id: "hello_world", other: "othello" }, "applied child");
    const rec = JSON.parse(lines[0] ?? "{}");
    expect(rec).toMatchObject({ task: "hello-bash", file: "hello.sh", id: "hello_world", other: "othello" });
    // A real backslash before "n" keeps the "n" a letter: "nhello" is one token, not "\n" + "hello".
    expect(redactSecrets(JSON.stringify({ path: "C:\\nhello" }))).toContain("nhello");
  });

  it("masks a value of 8 or more characters everywhere, also inside longer tokens", () => {
    registerSecretValue("s3cr3t-sample-token");
    registerSecretValue("abcdefgh");
    registerSecretValue("abcdefg");
    expect(redactSecrets('{"task":"job-s3cr3t-sample-token-x"}')).toBe('{"task":"job-[REDACTED]-x"}');
    expect(redactSecrets("abcdefgh-x abcdefgX")).toBe("[REDACTED]-x abcdefgX");
    expect(redactSecrets("abcdefg-x abcdefg")).toBe("abcdefg-x [REDACTED]");
  });

  it("never masks values shorter than 4 characters, and masks overlapping values fully", () => {
    registerSecretValue("abc");
    registerSecretValue("longsecret");
    registerSecretValue("longsecret-and-more");
    expect(redactSecrets('{"a":"abc","b":"longsecret-and-more"}')).toBe('{"a":"abc","b":"[REDACTED]"}');
  });

  it("matches values the way JSON encodes them", () => {
    const { lines, log } = capture();
    registerSecretValue('pa"ss\\word');
    log.info({ v: 'pa"ss\\word' }, "x");
    expect(JSON.parse(lines[0] ?? "{}").v).toBe("[REDACTED]");
  });

  it("holds a scope's current values only, and none once the scope is forgotten", () => {
    const { lines, log } = capture();
    secrets.set("ns/task-a", ["first-secret-value", "shared-secret"]);
    secrets.set("ns/task-b", ["shared-secret"]);
    expect(secrets.size).toBe(2);
    // A scope's new values replace its old ones (a rotated Secret, a removed env entry).
    secrets.set("ns/task-a", ["second-secret-value"]);
    expect(secrets.size).toBe(2);
    log.info({ a: "first-secret-value", b: "second-secret-value", c: "shared-secret" }, "x");
    expect(JSON.parse(lines[0] ?? "{}")).toEqual(
      expect.objectContaining({ a: "first-secret-value", b: "[REDACTED]", c: "[REDACTED]" }),
    );
    secrets.forget("ns/task-a");
    secrets.forget("ns/task-b");
    expect(secrets.size).toBe(0);
    log.info({ b: "second-secret-value" }, "x");
    expect(JSON.parse(lines[1] ?? "{}").b).toBe("second-secret-value");
  });

  it("two registries do not share values", () => {
    secrets.set("s", ["only-in-one-registry"]);
    expect(new SecretRegistry().redact("only-in-one-registry")).toBe("only-in-one-registry");
  });

  it("redacts well-known secret fields", () => {
    const { lines, log } = capture();
    log.info({ creds: { password: "p@ss", token: "tok" } }, "x");
    expect(lines[0]).not.toContain("p@ss");
    expect(lines[0]).not.toContain('"tok"');
  });
});
