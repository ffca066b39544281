import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import {
  clearSecretValues,
  controllerLogger,
  createLogger,
  reconcileLogger,
  registerSecretValue,
} from "./log.ts";

function capture() {
  const lines: string[] = [];
  const dest = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      cb();
    },
  });
  return { lines, log: createLogger({ level: "debug", destination: dest }) };
}

afterEach(() => clearSecretValues());

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

  it("masks registered secret values anywhere in the line", () => {
    const { lines, log } = capture();
    registerSecretValue("hunter2-very-secret");
    log.info({ env: { DB_PASSWORD_VALUE: "hunter2-very-secret" } }, "starting with hunter2-very-secret");
    expect(lines[0]).not.toContain("hunter2");
    expect(lines[0]).toContain("[REDACTED]");
  });

  it("redacts well-known secret fields", () => {
    const { lines, log } = capture();
    log.info({ creds: { password: "p@ss", token: "tok" } }, "x");
    expect(lines[0]).not.toContain("p@ss");
    expect(lines[0]).not.toContain('"tok"');
  });
});
