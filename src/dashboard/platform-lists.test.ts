import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION } from "../api/v1alpha1/kind.ts";
import type { ScalePlatform } from "../api/v1alpha1/scaleplatform.ts";
import type { ScalePlatformBackup } from "../api/v1alpha1/scaleplatformbackup.ts";
import { silentLogger } from "../log.ts";
import { ApiError } from "../runtime/errors.ts";
import { FakeKubeClient } from "../runtime/fake-client.ts";
import { FakeListWatch } from "../runtime/fake-listwatch.ts";
import { createDashboard } from "./server.ts";
import { SessionStore } from "./sessions.ts";
import { platformLists } from "./shared-read.ts";
import { FakeViewerApi, injectSignIn } from "./testing.ts";

// The platforms, backups and restores lists served from the shared lists (one informer per kind
// and namespace, as the dashboard), shown only to viewers an access review allows, followed live.

const PLATFORMS = "/dashboard/compute/platforms/scale";

/** A viewer whose own LISTs are counted. */
class CountingViewer extends FakeViewerApi {
  lists = 0;
  override async listPlatforms(namespace: string): Promise<ScalePlatform[]> {
    this.lists++;
    return super.listPlatforms(namespace);
  }
  override async listPlatformBackups(namespace: string): Promise<ScalePlatformBackup[]> {
    this.lists++;
    return super.listPlatformBackups(namespace);
  }
}

const platform = (name: string, ns = "default", stepSummary = "1/7") => ({
  apiVersion: API_VERSION,
  kind: "ScalePlatform",
  metadata: {
    name,
    namespace: ns,
    managedFields: [{}],
    annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}" },
  },
  spec: { plan: "Standard", domains: { platform: `${name}.example.test` } },
  status: { phase: "Provisioning", stepSummary },
});

function setup() {
  const client = new FakeKubeClient({
    objects: [
      platform("shop"),
      platform("hidden", "private"),
      {
        apiVersion: API_VERSION,
        kind: "ScalePlatformBackup",
        metadata: { name: "shop-manual-1", namespace: "default", creationTimestamp: "2026-11-23T10:00:00Z" },
        spec: { platformName: "shop", type: "full" },
        status: { phase: "Running" },
      },
    ],
  });
  const lists = platformLists((type, ns) => {
    const s = new FakeListWatch(client, type.apiVersion, type.kind, ns);
    // The dashboard's ServiceAccount was given nothing in "mine".
    if (ns === "mine") s.failNext.push(new ApiError(403, "Forbidden", "forbidden"));
    return s;
  }, silentLogger());
  return { client, lists };
}

let stop: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of stop) await f();
  stop = [];
});

describe("shared platform lists", () => {
  it("serves the platforms list from the shared list, trimmed, only to viewers allowed to list there", async () => {
    const { lists } = setup();
    const reader = new CountingViewer(
      { username: "r", groups: [] },
      new Set(["list scaleplatforms default"]),
    );
    const stranger = new CountingViewer(
      { username: "s", groups: [] },
      new Set(["list scaleplatforms private"]),
      ["private"],
    );
    const viewers: Record<string, FakeViewerApi> = { r: reader, s: stranger };
    const app = await createDashboard({
      log: silentLogger(),
      viewerApi: (t) => viewers[t] as FakeViewerApi,
      platformLists: lists,
    });
    stop.push(() => app.close(), lists.stop);
    const { body } = await injectSignIn(app, "r", `${PLATFORMS}?namespace=default`);
    expect(body).toContain('data-platform="shop"');
    expect(body).toContain(`data-sse="${PLATFORMS}/events?namespace=default"`);
    expect(reader.lists).toBe(0);
    const cached = await lists.platforms.list("default");
    expect(cached?.[0]?.metadata).not.toHaveProperty("managedFields");
    expect(cached?.[0]?.metadata.annotations).toEqual({});

    // Another namespace's platforms are not shown to a viewer who may not list there.
    const other = await injectSignIn(app, "s", `${PLATFORMS}?namespace=private`);
    expect(other.body).toContain('data-platform="hidden"');
    const refused = await app.inject({
      url: `${PLATFORMS}?namespace=default`,
      headers: { cookie: other.cookie },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).not.toContain("shop");
    const events = await app.inject({
      url: `${PLATFORMS}/events?namespace=default`,
      headers: { cookie: other.cookie },
    });
    expect(events.statusCode).toBe(403);
    expect(stranger.lists).toBe(0);
  });

  it("sends the cards again when the shared list changes", async () => {
    const { client, lists } = setup();
    const reader = new CountingViewer(
      { username: "r", groups: [] },
      new Set(["list scaleplatforms default"]),
    );
    const sessions = new SessionStore();
    const app = await createDashboard({
      log: silentLogger(),
      viewerApi: () => reader,
      platformLists: lists,
      sessions,
    });
    stop.push(() => app.close(), lists.stop);
    const { cookie } = await injectSignIn(app, "r", `${PLATFORMS}?namespace=default`);
    const base = await app.listen({ host: "127.0.0.1", port: 0 });
    const abort = new AbortController();
    const res = await fetch(`${base}${PLATFORMS}/events?namespace=default`, {
      headers: { cookie },
      signal: abort.signal,
    });
    const reader$ = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    const until = async (part: string) => {
      while (!text.includes(part)) text += new TextDecoder().decode((await reader$.read()).value);
    };
    await until('data-platform="shop"');
    await client.create(platform("later"));
    await until('data-platform="later"');
    expect(text).toContain("event: platforms");
    expect(reader.lists).toBe(0);

    // Access revoked (and the session's cached answer gone): the next change is refused and the
    // stream ends, with nothing of the list sent.
    reader.allow.delete("list scaleplatforms default");
    sessions.get(cookie.split("=")[1])?.access?.clear();
    text = "";
    await client.create(platform("after-revoke"));
    let done = false;
    while (!done) {
      const r = await reader$.read();
      done = r.done;
      text += new TextDecoder().decode(r.value);
    }
    expect(text).toContain("event: error\ndata: 403");
    expect(text).not.toContain("after-revoke");
    abort.abort();
  });

  it("serves a platform's backups from the shared list; falls back to the viewer's LIST where the dashboard may not list", async () => {
    const { lists, client } = setup();
    const viewer = new CountingViewer({ username: "o", groups: [] }, new Set(["* * *"]), ["default", "mine"]);
    viewer.platforms.set("default/shop", platform("shop") as unknown as ScalePlatform);
    viewer.platforms.set("mine/own", platform("own", "mine") as unknown as ScalePlatform);
    await client.create(platform("own", "mine"));
    const app = await createDashboard({ log: silentLogger(), viewerApi: () => viewer, platformLists: lists });
    stop.push(() => app.close(), lists.stop);
    const { body } = await injectSignIn(app, "o", `${PLATFORMS}/default/shop/backups`);
    expect(body).toContain('data-manual-backup="shop-manual-1"');
    expect(viewer.lists).toBe(0);
    const { body: mine } = await injectSignIn(app, "o", `${PLATFORMS}?namespace=mine`);
    expect(mine).toContain('data-platform="own"');
    expect(mine).not.toContain("data-sse=");
    expect(viewer.lists).toBe(1);
  });
});
