// The program a backup Job runs (`node /runner/backup.mjs`, from the ConfigMap <platform>-backup).
// pgBackRest must run inside the database pod (it reads PGDATA and reaches PostgreSQL through its
// Unix socket), so the Job execs there through the API server's exec subresource over a
// WebSocket (protocol v5/v4.channel.k8s.io: one leading channel byte per frame, 1 stdout,
// 2 stderr, 3 the final Status). It uses only Node's built-ins (global WebSocket, which accepts
// headers in Node ≥ 22), so any image with Node runs it, with no client library to install; the
// API server's CA comes from NODE_EXTRA_CA_CERTS. Its ServiceAccount may exec into that one pod
// only (Role with resourceNames).
//
// Steps: stanza-create (idempotent), `pgbackrest backup --type=$BACKUP_TYPE`, then `pgbackrest
// info --output=json`, pg_stat_archiver and the database's timeline; the summary goes to /dev/termination-log (JSON, under
// the kubelet's 4 KiB), where the operator reads it. Exit 0: backup done, or skipped because
// another backup of the platform was running.
//
// Cancelling (SIGTERM: the Job was deleted with its ScalePlatformBackup). Closing the exec stream
// does not stop what it started, so the runner execs a second script (CANCEL below) into the
// database pod. The backup's shell there writes its pid to /tmp/pgbackrest/run-<runner pod>.pid
// and checks /tmp/pgbackrest/run-<runner pod>.cancel before each step. The cancel script creates
// that file first (a backup not started yet never starts), then sends SIGTERM to every descendant
// of that shell (pgBackRest's main process and its backup:local processes), again each poll in
// case a step was starting; SIGKILL after CANCEL_TERM_SECONDS. Only descendants of the recorded
// shell, whose command line names this run, are signalled, so a reused pid is never hit. Not
// `pgbackrest stop --force`: it would also end a running archive-push, and a stop file left behind
// by a runner killed before its `start` would block WAL archiving until someone ran `start`.

/** Version of the summary format the runner writes and the operator parses. */
export const RUNNER_SUMMARY_VERSION = 1;

/** Seconds the cancel script waits after SIGTERM before it sends SIGKILL. */
export const CANCEL_TERM_SECONDS = 10;
/**
 * Seconds within which a cancelled backup's pgBackRest processes are gone from the database pod,
 * counted from the deletion of the request: the garbage collector deletes the Job and its pod
 * (about 1-2 s), the runner execs the cancel script, SIGKILL follows SIGTERM after
 * CANCEL_TERM_SECONDS at worst. The runner's grace period must cover it.
 */
export const CANCEL_BOUND_SECONDS = CANCEL_TERM_SECONDS + 10;
/** terminationGracePeriodSeconds of the backup pods: time for the cancel, and slack. */
export const RUNNER_GRACE_SECONDS = CANCEL_BOUND_SECONDS + 10;

/**
 * Bash run in the database pod to cancel the run whose file prefix is $1 (see the header). Prints
 * one line: how the backup ended. Exits 0 once no process of the run is left.
 */
export const CANCEL_SCRIPT = String.raw`r=$1; log=$(dirname "$r")/log; mkdir -p "$log"; touch "$r.cancel"
note() { echo "$(date -u +%FT%TZ) $r: $1" | tee -a "$log/cancel.log"; }
sh=$(cat "$r.pid" 2>/dev/null) || { note "no backup running (not started yet, or ended)"; exit 0; }
alive() { [[ $(tr '\0' ' ' 2>/dev/null < /proc/$sh/cmdline) == *"$r"* ]]; }
kids() { local s p c st pp; for s in /proc/[0-9]*/stat; do read -r p c st pp _ 2>/dev/null < "$s" && [ "$pp" = "$1" ] && echo "$p" && kids "$p"; done; }
start=$(date +%s%N); sig=TERM
for i in $(seq 1 $((CANCEL_WAIT * 5 + 25))); do
  alive || { note "backup stopped $(( ($(date +%s%N) - start) / 1000000 )) ms after SIGTERM (last signal SIG$sig)"; exit 0; }
  [ $i -gt $((CANCEL_WAIT * 5)) ] && sig=KILL
  ps=$(kids "$sh"); [ -n "$ps" ] && kill -$sig $ps 2>/dev/null
  sleep 0.2
done
note "backup still running after SIGKILL"; exit 1`;

/**
 * Bash prelude of the backup's exec in the database pod, $r being the run's file prefix: records
 * the shell's pid, and defines `step`, which runs a command as a child unless cancelled.
 */
export const BACKUP_PRELUDE = `echo $$ > "$r.pid"; trap 'rm -f "$r.pid" "$r.cancel"' EXIT
step() { test -e "$r.cancel" && exit 143; "$@" & wait $!; }`;

/** Source of backup.mjs. */
export const RUNNER_SCRIPT = String.raw`import { readFileSync, writeFileSync } from "node:fs";

const SA = "/var/run/secrets/kubernetes.io/serviceaccount";
const CANCEL = ${JSON.stringify(CANCEL_SCRIPT)};
const CANCEL_WAIT = ${CANCEL_TERM_SECONDS};
const PRELUDE = ${JSON.stringify(BACKUP_PRELUDE)};
const ns = readFileSync(SA + "/namespace", "utf8").trim();
const token = readFileSync(SA + "/token", "utf8").trim();
const api = "wss://" + process.env.KUBERNETES_SERVICE_HOST + ":" + process.env.KUBERNETES_SERVICE_PORT;
const pod = process.env.DB_POD;
const type = process.env.BACKUP_TYPE === "full" ? "full" : "incr";
const run = "/tmp/pgbackrest/run-" + (process.env.POD_NAME || process.env.JOB_NAME || "manual").replace(/[^a-z0-9-]/g, "");
const MAX_SUMMARY = 3800;

function log(msg) { process.stdout.write("[runner] " + msg + "\n"); }

function exec(script) {
  return new Promise((resolve, reject) => {
    const q = new URLSearchParams({ container: "postgres", stdout: "true", stderr: "true" });
    for (const c of ["bash", "-c", script]) q.append("command", c);
    const ws = new WebSocket(api + "/api/v1/namespaces/" + ns + "/pods/" + pod + "/exec?" + q, {
      protocols: ["v5.channel.k8s.io", "v4.channel.k8s.io"],
      headers: { Authorization: "Bearer " + token },
    });
    ws.binaryType = "arraybuffer";
    let out = "";
    let status;
    ws.onmessage = (ev) => {
      const b = typeof ev.data === "string" ? Buffer.from(ev.data) : Buffer.from(ev.data);
      if (b.length === 0) return;
      const text = b.subarray(1).toString("utf8");
      if (b[0] === 1 || b[0] === 2) { out += text; process.stdout.write(text); }
      else if (b[0] === 3) { try { status = JSON.parse(text); } catch { status = { status: "Failure", message: text }; } }
    };
    ws.onerror = (ev) => reject(new Error("exec into " + pod + ": " + (ev.message || ev.error?.message || "WebSocket error")));
    ws.onclose = () => {
      if (!status) return reject(new Error("exec into " + pod + ": connection closed without a status"));
      if (status.status === "Success") return resolve({ code: 0, out });
      const cause = (status.details?.causes || []).find((c) => c.reason === "ExitCode");
      if (!cause) return reject(new Error("exec into " + pod + ": " + (status.message || JSON.stringify(status))));
      resolve({ code: Number(cause.message), out });
    };
  });
}

function errorText(out) {
  const lines = out.split("\n").filter((l) => /ERROR|error|FATAL/.test(l));
  return (lines.length ? lines.join("\n") : out).trim().slice(-600);
}

function summarize(info, archiver, db) {
  const stanza = Array.isArray(info) ? info[0] : undefined;
  const all = (stanza?.backup || []).map((b) => [
    b.label, b.type, b.timestamp?.start, b.timestamp?.stop, b.info?.size, b.info?.repository?.delta,
  ]).reverse();
  const s = {
    stanzaStatus: stanza?.status?.code,
    stanzaMessage: stanza?.status?.message,
    oldestStart: all.length ? all[all.length - 1][2] : undefined,
    backups: all,
    archiveMax: (stanza?.archive || [])[0]?.max,
    archiver,
  };
  // The serving timeline, only from the repository's own database: a database initialised anew
  // (its volume lost) has another system identifier and a timeline of its own.
  const current = (stanza?.db || []).reduce((a, d) => (!a || d.id > a.id ? d : a), undefined);
  if (db.timeline > 0 && current && String(current["system-id"]) === db.systemId) s.timeline = db.timeline;
  return s;
}

async function info() {
  const r = await exec(
    "pgbackrest info --output=json --log-level-console=warn; echo; echo @@ARCHIVER@@; " +
      "psql -h /tmp -d postgres -U \"$PGBACKREST_PG1_USER\" -AtX -F ' ' -c \"select coalesce(extract(epoch from last_archived_time)::bigint,0), failed_count, coalesce(extract(epoch from last_failed_time)::bigint,0), (select timeline_id from pg_control_checkpoint()), (select system_identifier from pg_control_system()) from pg_stat_archiver\"",
  );
  const [json, arch] = r.out.split("@@ARCHIVER@@");
  let parsed;
  // A system identifier has 19 digits, past a double's precision: kept as its source text.
  const exact = (key, value, ctx) => (key === "system-id" && ctx?.source ? ctx.source : value);
  try { parsed = JSON.parse(json.trim(), exact); } catch { parsed = undefined; }
  const [lastArchived, failedCount, lastFailed, timeline, systemId] = (arch || "").trim().split(" ");
  return summarize(
    parsed,
    { lastArchived: Number(lastArchived), failedCount: Number(failedCount), lastFailed: Number(lastFailed) },
    { timeline: Number(timeline), systemId },
  );
}

function finish(result) {
  let text = JSON.stringify(result);
  while (text.length > MAX_SUMMARY && result.backups && result.backups.length > 1) {
    result.backups.pop();
    text = JSON.stringify(result);
  }
  writeFileSync("/dev/termination-log", text);
}

let cancelled = false;
process.on("SIGTERM", async () => {
  cancelled = true;
  log("cancelled: stopping the backup in " + pod);
  try {
    const q = (t) => "'" + t.replace(/'/g, "'\\''") + "'";
    const c = await exec("CANCEL_WAIT=" + CANCEL_WAIT + " bash -c " + q(CANCEL) + " cancel " + run);
    if (c.code !== 0) log("cancel exited " + c.code);
  } catch (e) { log(String(e)); }
  finish({ v: 1, ok: false, type, cancelled: true, error: "cancelled" });
  process.exit(143);
});

let result = { v: 1, ok: false, type };
try {
  log(type + " backup of " + pod);
  const b = await exec(
    "set -u; r=" + run + "; mkdir -p /tmp/pgbackrest/lock /tmp/pgbackrest/log\n" + PRELUDE +
      "\nstep pgbackrest stanza-create || exit $?; step pgbackrest backup --type=" + type,
  );
  if (b.code === 0) result.ok = true;
  else if (/LockAcquireError|\[050\]/.test(b.out)) { result.ok = true; result.skipped = "another backup of this database is running"; }
  else result.error = errorText(b.out) || "pgbackrest exited " + b.code;
} catch (e) {
  result.error = String(e.message || e);
}
if (!cancelled) {
  try { Object.assign(result, await info()); } catch (e) { result.infoError = String(e.message || e).slice(0, 300); }
  finish(result);
  log(result.ok ? "done" : "failed: " + result.error);
  process.exit(result.ok ? 0 : 1);
}
`;
