// Micro-benchmark: CPU per watch event of KubeTransport.watch against client-node's Watch (what
// the transport used before), on a loopback server (a child process, so its CPU is not counted)
// streaming the same CronJob events to both.
//   node hack/bench/watch-decode.ts [--events 5000] [--rounds 3]
import { fork } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { KubeConfig, Watch } from "@kubernetes/client-node";
import { scheduledTaskSpecSchema } from "../../src/api/v1alpha1/scheduledtask.ts";
import { DEFAULT_TASK_CONTROLLER_CONFIG } from "../../src/controllers/scheduledtask/config.ts";
import { desiredCronJob } from "../../src/controllers/scheduledtask/desired.ts";
import { KubeTransport } from "../../src/runtime/rest.ts";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "5000" },
    rounds: { type: "string", default: "3" },
    serve: { type: "boolean", default: false },
  },
});
const EVENTS = Number(values.events);
const spec = scheduledTaskSpecSchema.parse({
  schedule: "0 0 1 1 *",
  language: "Bash",
  plan: "Micro",
  script: "echo hi",
});
const task = {
  apiVersion: "cronscale.io/v1alpha1",
  kind: "ScheduledTask",
  metadata: { name: "t", namespace: "ns", uid: "u" },
};
const cronJob = desiredCronJob(task as never, spec, DEFAULT_TASK_CONTROLLER_CONFIG);
// As the server sends it: with managedFields and server-set metadata.
const managedFields = [
  {
    manager: "cronscale",
    operation: "Apply",
    apiVersion: "batch/v1",
    time: "2026-11-23T00:00:00Z",
    fieldsType: "FieldsV1",
    fieldsV1: {
      "f:spec": {
        "f:jobTemplate": {
          "f:spec": {
            "f:template": {
              "f:spec": {
                "f:containers": {
                  'k:{"name":"task"}': {
                    ".": {},
                    "f:image": {},
                    "f:command": {},
                    "f:resources": { "f:limits": {}, "f:requests": {} },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
];
const lines = Array.from(
  { length: EVENTS },
  (_, i) =>
    `${JSON.stringify({ type: "ADDED", object: { ...cronJob, metadata: { ...cronJob.metadata, name: `t${i}`, uid: `uid-${i}`, resourceVersion: String(1000 + i), creationTimestamp: "2026-11-23T00:00:00Z", managedFields } } })}\n`,
).join("");
const body = Buffer.from(lines);

if (values.serve) {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    // 64 KiB writes, as a busy watch stream arrives.
    for (let i = 0; i < body.length; i += 65536) res.write(body.subarray(i, i + 65536));
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  process.send?.((server.address() as AddressInfo).port);
  process.on("disconnect", () => process.exit(0));
} else {
  await measure();
}

async function measure() {
  const child = fork(new URL(import.meta.url).pathname, ["--serve", "--events", String(EVENTS)]);
  const port = await new Promise<number>((r) => child.once("message", (m) => r(m as number)));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  const transport = KubeTransport.create(kc);

  async function run(which: "client-node Watch" | "KubeTransport.watch"): Promise<number> {
    let n = 0;
    const t0 = process.cpuUsage();
    await new Promise<void>((resolve) => {
      const onEvent = () => {
        n++;
      };
      if (which === "KubeTransport.watch") void transport.watch("/api/v1/x", {}, onEvent, () => resolve());
      else void new Watch(kc).watch("/api/v1/x", {}, onEvent, () => resolve());
    });
    const d = process.cpuUsage(t0);
    if (n !== EVENTS) throw new Error(`${which}: ${n} events of ${EVENTS}`);
    return (d.user + d.system) / EVENTS; // µs per event
  }

  const out: Record<string, number[]> = { "client-node Watch": [], "KubeTransport.watch": [] };
  await run("client-node Watch");
  await run("KubeTransport.watch"); // warm-up
  for (let r = 0; r < Number(values.rounds); r++)
    for (const w of ["client-node Watch", "KubeTransport.watch"] as const)
      out[w]!.push(+(await run(w)).toFixed(1));
  console.log(
    JSON.stringify({
      events: EVENTS,
      bytesPerEvent: Math.round(body.length / EVENTS),
      cpuMicrosecondsPerEvent: out,
    }),
  );
  child.disconnect();
}
