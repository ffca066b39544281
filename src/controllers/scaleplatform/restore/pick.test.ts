import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PICK_FUNCTIONS, PICK_STEP } from "./pick.ts";

// Runs the restore Job's selection functions in bash against pgBackRest's info JSON and a
// PostgreSQL timeline history file.

const dir = mkdtempSync(join(tmpdir(), "pick-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type B = { label: string; tli: number; stopLsn?: string; stop: number };

/** pgBackRest 2.45's `info --output=json` of one stanza holding `backups` (one line, keys sorted). */
function infoJson(backups: B[]): string {
  const wal = (tli: number) => `${tli.toString(16).toUpperCase().padStart(8, "0")}0000000000000003`;
  const backup = backups.map((b) => ({
    archive: { start: wal(b.tli), stop: wal(b.tli) },
    backrest: { format: 5, version: "2.45" },
    database: { id: 1, "repo-key": 1 },
    error: false,
    info: { delta: 23000000, repository: { delta: 3000000, size: 3000000 }, size: 23000000 },
    label: b.label,
    link: null,
    ...(b.stopLsn ? { lsn: { start: "0/2000028", stop: b.stopLsn } } : {}),
    prior: null,
    reference: null,
    tablespace: null,
    timestamp: { start: b.stop - 5, stop: b.stop },
    type: b.label.endsWith("F") ? "full" : "incr",
  }));
  return JSON.stringify([
    {
      archive: [
        {
          database: { id: 1, "repo-key": 1 },
          id: "15-1",
          max: "000000020000000000000009",
          min: "000000010000000000000001",
        },
      ],
      backup,
      cipher: "aes-256-cbc",
      db: [{ id: 1, "repo-key": 1, "system-id": 7300000000000000000, version: "15" }],
      name: "db",
      repo: [{ cipher: "aes-256-cbc", key: 1, status: { code: 0, message: "ok" } }],
      status: { code: 0, lock: { backup: { held: false } }, message: "ok" },
    },
  ]);
}

let n = 0;
function pick(backups: B[], timeline: number, before: number | "", history?: string): string {
  n += 1;
  const info = join(dir, `info-${n}.json`);
  writeFileSync(info, infoJson(backups));
  let hist = "";
  if (history !== undefined) {
    hist = join(dir, `hist-${n}`);
    writeFileSync(hist, history);
  }
  return execFileSync(
    "bash",
    [
      "-c",
      `set -euo pipefail\n${PICK_FUNCTIONS}\nbackup_lines <"$1" | pick_backup "$2" "$3" "$4"`,
      "pick",
      info,
      String(timeline),
      String(before),
      hist,
    ],
    { encoding: "utf8" },
  ).trim();
}

// Timeline 1: full A, incremental B. A point-in-time restore to a point between them promoted
// timeline 2 at 0/4000000 ("1<TAB>0/4000000<TAB>before …"). C was taken on timeline 1 afterwards
// (the old branch, before the cutover), D on timeline 2.
const A: B = { label: "20260101-010000F", tli: 1, stopLsn: "0/3000100", stop: 1000 };
const B_: B = { label: "20260101-010000F_20260101-020000I", tli: 1, stopLsn: "0/5000100", stop: 2000 };
const C: B = { label: "20260101-010000F_20260101-030000I", tli: 1, stopLsn: "0/7000100", stop: 3000 };
const D: B = { label: "20260101-040000F", tli: 2, stopLsn: "0/6000100", stop: 4000 };
const TL2 = "1\t0/4000000\tbefore 2026-01-01 01:30:00+00\n";

describe("pick_backup", () => {
  it("latest along a timeline: the newest backup taken on it", () => {
    expect(pick([A, B_, C, D], 2, "", TL2)).toBe(D.label);
    expect(pick([A, B_, C], 1, "")).toBe(C.label);
  });

  it("a parent timeline's backup is an ancestor only if it stopped at or before the switch point", () => {
    // Before D exists: B and C are on timeline 1 past the switch, A is before it.
    expect(pick([A, B_, C], 2, "", TL2)).toBe(A.label);
    const atSwitch = { ...B_, stopLsn: "0/4000000" };
    expect(pick([A, atSwitch, C], 2, "", TL2)).toBe(atSwitch.label);
    // LSNs compare as numbers (hex, high word first), not as text.
    const far = "1\t1/00000000\tbefore x\n";
    expect(pick([A, { ...B_, stopLsn: "0/FF000000" }], 2, "", far)).toBe(B_.label);
    expect(pick([A, { ...B_, stopLsn: "1/A0" }], 2, "", far)).toBe(A.label);
  });

  it("the history reaches back over several timelines; a branch off it is never chosen", () => {
    const tl3 = `${TL2}2\t0/8000000\tbefore 2026-01-01 05:00:00+00\n`;
    expect(pick([A, B_, C, D], 3, "", tl3)).toBe(D.label);
    expect(pick([A, B_, C, { ...D, stopLsn: "0/9000000" }], 3, "", tl3)).toBe(A.label);
    // A backup on timeline 3 is no ancestor of timeline 2.
    expect(
      pick(
        [A, B_, C, D, { label: "20260101-060000F", tli: 3, stopLsn: "0/9000000", stop: 6000 }],
        2,
        "",
        TL2,
      ),
    ).toBe(D.label);
  });

  it("a time target takes the newest ancestor that ended before it", () => {
    expect(pick([A, B_, C, D], 2, 3500, TL2)).toBe(A.label);
    expect(pick([A, B_, C, D], 2, 4001, TL2)).toBe(D.label);
    expect(pick([A, B_, C, D], 2, 4000, TL2)).toBe(A.label);
    expect(pick([A, B_, C, D], 1, 2500)).toBe(B_.label);
  });

  it("none: nothing printed", () => {
    expect(pick([A, B_, C, D], 2, 1000, TL2)).toBe("");
    expect(pick([B_, C], 2, "", TL2)).toBe("");
    // Without the history file only the timeline's own backups count.
    expect(pick([A, B_, C], 2, "")).toBe("");
    // Without a stop LSN a parent timeline's backup cannot be shown to be an ancestor.
    expect(pick([{ ...A, stopLsn: undefined }], 2, "", TL2)).toBe("");
    expect(pick([], 1, "")).toBe("");
  });
});

describe("the Job's pick step", () => {
  // pgBackRest stood in for by a script serving the info JSON and timeline 2's history file.
  const bin = join(dir, "bin");
  const fake = [
    "#!/bin/bash",
    'case "$1" in',
    '  info) cat "$FAKE_INFO" ;;',
    '  repo-get) for a; do :; done; case "$a" in archive/db/15-1/00000002.history) cat "$FAKE_HISTORY" ;; *) exit 1 ;; esac ;;',
    "  *) exit 2 ;;",
    "esac",
  ].join("\n");

  function step(backups: B[], timeline: string, before: string) {
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "pgbackrest"), fake, { mode: 0o755 });
    writeFileSync(join(dir, "step-info.json"), infoJson(backups));
    writeFileSync(join(dir, "step-history"), TL2);
    const term = join(dir, "termination-log");
    writeFileSync(term, "");
    const script = `set -euo pipefail\n${PICK_FUNCTIONS}\nset -- --type=time '--target=a b'\n${PICK_STEP.replaceAll("/dev/termination-log", term)}\nprintf '%s\\n' "$@"`;
    const env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      FAKE_INFO: join(dir, "step-info.json"),
      FAKE_HISTORY: join(dir, "step-history"),
      PGBACKREST_STANZA: "db",
      RESTORE_PICK_TIMELINE: timeline,
      RESTORE_PICK_BEFORE: before,
      RESTORE_TARGET: "latest",
      RESTORE_WINDOW: "2026-01-01T01:00:00Z to 2026-01-01T06:00:00Z",
    };
    try {
      const out = execFileSync("bash", ["-c", script], { env, encoding: "utf8", stdio: "pipe" });
      return { code: 0, args: out.split("\n").filter((l) => l.startsWith("--")) };
    } catch (e) {
      return { code: (e as { status: number }).status, message: readFileSync(term, "utf8") };
    }
  }

  it("prepends --set of the ancestor, reading the followed timeline's history from the repository", () => {
    expect(step([A, B_, C], "2", "")).toEqual({
      code: 0,
      args: [`--set=${A.label}`, "--type=time", "--target=a b"],
    });
    expect(step([A, B_, C], "", "")).toEqual({ code: 0, args: ["--type=time", "--target=a b"] });
  });

  it("fails naming the target and the window when no backup is an ancestor", () => {
    expect(step([B_, C], "2", "")).toEqual({
      code: 1,
      message:
        "no backup to restore latest from: none in the repository is an ancestor of timeline 2 (recoverable window 2026-01-01T01:00:00Z to 2026-01-01T06:00:00Z)",
    });
    expect(step([A, B_, C], "2", "900")).toMatchObject({
      code: 1,
      message: expect.stringContaining("that ended before the target"),
    });
  });
});
