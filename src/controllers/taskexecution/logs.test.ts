import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../../runtime/errors.ts";
import { KubeTransport } from "../../runtime/rest.ts";
import { loopbackKubeConfig } from "../../runtime/testing.ts";
import { KubePodLogReader } from "./logs.ts";

// The pods/log subresource as the API server serves it: negotiated like any other resource (an
// Accept of text/plain gets 406), answered in plain text.
let server: Server;
const urls: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    urls.push(req.url ?? "");
    const url = new URL(req.url ?? "", "http://x");
    if (!/application\/json/.test(req.headers.accept ?? "")) {
      res.writeHead(406, { "content-type": "application/json" });
      return res.end(JSON.stringify({ kind: "Status", reason: "NotAcceptable", code: 406 }));
    }
    if (url.pathname !== "/api/v1/namespaces/ns/pods/p/log") {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ kind: "Status", reason: "NotFound", code: 404 }));
    }
    res.writeHead(200, { "content-type": "text/plain" });
    // Output that parses as JSON stays the text it is.
    res.end(url.searchParams.has("tailLines") ? "[1,2]\nlast\n" : "42\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("KubePodLogReader", () => {
  it("reads the head by bytes and the tail by lines of one container, as text", async () => {
    const logs = new KubePodLogReader(
      KubeTransport.create(loopbackKubeConfig((server.address() as AddressInfo).port)),
    );
    expect(await logs.head("ns", "p", "script", 1025)).toBe("42\n");
    expect(urls.at(-1)).toBe("/api/v1/namespaces/ns/pods/p/log?container=script&limitBytes=1025");
    expect(await logs.tail("ns", "p", "script", 2000)).toBe("[1,2]\nlast\n");
    expect(urls.at(-1)).toBe("/api/v1/namespaces/ns/pods/p/log?container=script&tailLines=2000");
    await expect(logs.head("ns", "gone", "script", 10)).rejects.toBeInstanceOf(ApiError);
  });
});
