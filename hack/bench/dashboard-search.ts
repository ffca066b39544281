// Server-side cost of the dashboard's task list and search-as-you-type over N tasks:
// first render of the list page, then one partial per keystroke of a few search words.
// The tasks come from an in-memory viewer client, so this measures the dashboard alone (list
// filtering, rendering, HTTP) — not the API server's list call.
//   node hack/bench/dashboard-search.ts [N=10000]
import { createDashboard } from "../../src/dashboard/server.ts";
import { FakeViewerApi, sampleTask } from "../../src/dashboard/testing.ts";
import { silentLogger } from "../../src/log.ts";

const n = Number(process.argv[2] ?? 10_000);
const viewer = new FakeViewerApi({ username: "bench", groups: [] }, new Set(["* * *"]));
for (let i = 0; i < n; i++) {
  const name = `task-${String(i).padStart(5, "0")}-${["backup", "report", "sync", "cleanup"][i % 4]}`;
  viewer.tasks.set(`default/${name}`, sampleTask(name));
}
const app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer });
const form = await app.inject({ method: "GET", url: "/dashboard/sign-in" });
const pre = String(form.headers["set-cookie"]).split(";")[0] ?? "";
const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? "";
const signed = await app.inject({
  method: "POST",
  url: "/dashboard/sign-in",
  headers: { cookie: pre, origin: "http://bench", host: "bench" },
  payload: { _csrf: csrf, token: "t" },
});
const cookie = String(signed.headers["set-cookie"]).split(";")[0] ?? "";

const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
let t = process.hrtime.bigint();
const page = await app.inject({
  method: "GET",
  url: "/dashboard/compute/serverless/tasks?namespace=default",
  headers: { cookie },
});
const firstPaint = ms(t);
const times: number[] = [];
for (const word of ["backup", "task-0999", "sync", "cleanup", "task-1", "zzz"]) {
  for (let i = 1; i <= word.length; i++) {
    t = process.hrtime.bigint();
    const r = await app.inject({
      method: "GET",
      url: `/dashboard/compute/serverless/tasks/results?namespace=default&q=${word.slice(0, i)}`,
      headers: { cookie, "x-partial": "1" },
    });
    times.push(ms(t));
    if (r.statusCode !== 200) throw new Error(`search answered ${r.statusCode}`);
  }
}
times.sort((a, b) => a - b);
const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]?.toFixed(1);
console.log(
  JSON.stringify({
    tasks: n,
    listPageMs: Number(firstPaint.toFixed(1)),
    listPageBytes: page.body.length,
    keystrokes: times.length,
    searchP50Ms: Number(q(0.5)),
    searchP99Ms: Number(q(0.99)),
    rssMiB: Math.round(process.memoryUsage().rss / 2 ** 20),
  }),
);
await app.close();
