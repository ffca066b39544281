import http from "node:http";
import https from "node:https";
import { ingressPorts, localCa } from "../scaleplatform/operator.ts";

// Reaching a platform's commerce service the way its users do: HTTPS through the Ingress
// controller (Traefik, on loopback here), SNI and Host of the platform's host name, the
// certificate verified against the cluster CA. Plus a webhook receiver on the host.

/**
 * `fetch` for https://<platform host>/... URLs: the connection goes to the Ingress controller's
 * loopback port, everything else (SNI, Host, certificate check) is as for the real name. Also
 * given to oauth4webapi as its customFetch.
 */
export function ingressFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
  const body = init.body === undefined || init.body === null ? undefined : String(init.body);
  const sent: Record<string, string> = {};
  headers.forEach((v, k) => {
    sent[k] = v;
  });
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: "127.0.0.1",
        port: ingressPorts().https,
        servername: url.hostname,
        ca: localCa(),
        rejectUnauthorized: true,
        agent: false,
        method,
        path: `${url.pathname}${url.search}`,
        headers: { ...sent, host: url.hostname },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
          }
          const status = res.statusCode ?? 0;
          const nullBody = status === 204 || status === 304;
          resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: h }));
        });
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`timeout: ${method} ${url}`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** A JSON call to the platform's API host with a bearer credential. */
export async function api(
  host: string,
  path: string,
  credential: string,
  opts: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  return ingressFetch(`https://${host}${path}`, {
    method: opts.method ?? (opts.json === undefined ? "GET" : "POST"),
    headers: {
      authorization: `Bearer ${credential}`,
      ...(opts.json === undefined ? {} : { "content-type": "application/json" }),
      ...opts.headers,
    },
    body: opts.json === undefined ? undefined : JSON.stringify(opts.json),
  });
}

/** A JSON call that must answer `status`; resolves with the parsed body. */
export async function apiJson<T = Record<string, unknown>>(
  host: string,
  path: string,
  credential: string,
  status: number,
  opts: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const r = await api(host, path, credential, opts);
  const text = await r.text();
  if (r.status !== status) throw new Error(`${opts.method ?? "GET/POST"} ${path}: HTTP ${r.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** A GraphQL request to the API host: its data, errors and extensions. */
export async function gql<T = Record<string, unknown>>(
  host: string,
  credential: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<{
  data?: T;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: { cost?: { requestedQueryCost: number } };
}> {
  const r = await api(host, "/graphql", credential, { json: { query, variables } });
  const text = await r.text();
  if (!r.headers.get("content-type")?.includes("json"))
    throw new Error(`POST /graphql: HTTP ${r.status} ${text}`);
  return JSON.parse(text) as never;
}

/** One request the receiver got. */
export interface Received {
  at: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status the receiver answered with. */
  status: number;
}

/**
 * An HTTP webhook receiver on `host` (the host's end of the node link, which the operator lets
 * webhooks reach). `answer` picks the status of each request (default 204).
 */
export async function startReceiver(
  host: string,
  answer: (
    r: Omit<Received, "status">,
    index: number,
  ) => { status: number; headers?: Record<string, string> } = () => ({
    status: 204,
  }),
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => {
      body += d.toString("utf8");
    });
    req.on("end", () => {
      const r = {
        at: Date.now(),
        path: req.url ?? "",
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body,
      };
      const a = answer(r, received.length);
      received.push({ ...r, status: a.status });
      res.writeHead(a.status, a.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
