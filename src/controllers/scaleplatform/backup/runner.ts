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
// the kubelet's 4 KiB), where the operator reads it. SIGTERM (the Job deleted: a cancelled
// backup) kills the pgBackRest process in the database pod, which then releases its lock.
// Exit 0: backup done, or skipped because another backup of the platform was running.

/** Version of the summary format the runner writes and the operator parses. */
export const RUNNER_SUMMARY_VERSION = 1;

/** Source of backup.mjs. */
export const RUNNER_SCRIPT = String.raw`import { readFileSync, writeFileSync } from "node:fs";

const SA = "/var/run/secrets/kubernetes.io/serviceaccount";
const ns = readFileSync(SA + "/namespace", "utf8").trim();
const token = readFileSync(SA + "/token", "utf8").trim();
const api = "wss://" + process.env.KUBERNETES_SERVICE_HOST + ":" + process.env.KUBERNETES_SERVICE_PORT;
const pod = process.env.DB_POD;
const type = process.env.BACKUP_TYPE === "full" ? "full" : "incr";
const job = (process.env.JOB_NAME || "manual").replace(/[^a-z0-9-]/g, "");
const pidFile = "/tmp/pgbackrest/job-" + job + ".pid";
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
  try { await exec("test -f " + pidFile + " && kill -TERM $(cat " + pidFile + ")"); } catch (e) { log(String(e)); }
  finish({ v: 1, ok: false, type, cancelled: true, error: "cancelled" });
  process.exit(143);
});

let result = { v: 1, ok: false, type };
try {
  log(type + " backup of " + pod);
  const b = await exec(
    "set -u; mkdir -p /tmp/pgbackrest/lock /tmp/pgbackrest/log; " +
      "pgbackrest stanza-create || exit $?; " +
      "pgbackrest backup --type=" + type + " & pid=$!; echo $pid > " + pidFile + "; wait $pid; rc=$?; rm -f " + pidFile + "; exit $rc",
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
