import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { Logger } from "pino";
import { GROUP } from "../api/v1alpha1/kind.ts";
import { EXECUTION_RESULTS } from "../api/v1alpha1/scheduledtask.ts";
import type { KubeClient } from "../runtime/client.ts";
import type { KubeObject } from "../runtime/types.ts";
import { decodeCursor, type ExecutionArchive, encodeCursor, positionOf } from "./store.ts";

// The history endpoint: the archive read with the caller's own Kubernetes identity. The bearer
// token is checked with a TokenReview, then a SubjectAccessReview asks whether that user may
// `get` the task (history, logs, a task's usage) or `list` tasks in the namespace (namespace
// usage): whoever may read the task may read its history, nobody else. Served on its own port,
// apart from the unauthenticated probes and metrics, over HTTPS when given a certificate (the
// bearer tokens it receives must not cross the network in clear).
//
//   GET /api/v1/namespaces/{ns}/scheduledtasks/{task}/history?since=24h&failed=true&limit=100
//       [&result=Failed][&cursor=C]: {items, next?}; `next`, when present, is the cursor of the
//       page after this one (keyset paging: newest first, a page deep in the history as fast as the first)
//   GET /api/v1/namespaces/{ns}/scheduledtasks/{task}/logs[?run=NAME]
//   GET /api/v1/namespaces/{ns}/usage?month=2026-11[&task=NAME]

/** What a request asks to do, in RBAC terms. */
export interface Access {
  namespace: string;
  verb: "get" | "list";
  /** Task name for `get`. */
  name?: string;
}

/** Answers whether a bearer token may do `access`. */
export interface Authorizer {
  check(token: string, access: Access): Promise<"allowed" | "forbidden" | "unauthenticated">;
}

/** Authorizer through the API server: TokenReview, then SubjectAccessReview. */
export class KubeAuthorizer implements Authorizer {
  private readonly client: KubeClient;
  constructor(client: KubeClient) {
    this.client = client;
  }

  async check(token: string, access: Access) {
    const review = await this.client.create<
      KubeObject & {
        status?: {
          authenticated?: boolean;
          user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
        };
      }
    >({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", metadata: {}, spec: { token } });
    const user = review.status?.user;
    if (!review.status?.authenticated || !user) return "unauthenticated" as const;
    const sar = await this.client.create<KubeObject & { status?: { allowed?: boolean } }>({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      metadata: {},
      spec: {
        user: user.username,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        resourceAttributes: {
          namespace: access.namespace,
          verb: access.verb,
          group: GROUP,
          resource: "scheduledtasks",
          name: access.name,
        },
      },
    });
    return sar.status?.allowed ? ("allowed" as const) : ("forbidden" as const);
  }
}

/** A response of the endpoint. */
export interface Reply {
  status: number;
  body: unknown;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const MAX_LIMIT = 1000;

/** "24h", "30m", "7d", or an RFC 3339 time → the time it means; undefined when invalid. */
export function parseSince(text: string, now: Date): Date | undefined {
  const rel = /^(\d+)(s|m|h|d)$/.exec(text);
  if (rel) {
    const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as "s" | "m" | "h" | "d"];
    return new Date(now.getTime() - Number(rel[1]) * unit);
  }
  const t = Date.parse(text);
  return Number.isFinite(t) && /^\d{4}-\d{2}-\d{2}T/.test(text) ? new Date(t) : undefined;
}

const bad = (message: string): Reply => ({ status: 400, body: { error: message } });

/** Routes and answers one request (method GET, path with query, Authorization header). */
export async function handle(
  method: string,
  url: string,
  authorization: string | undefined,
  deps: { archive: ExecutionArchive; authorizer: Authorizer; now: () => Date },
): Promise<Reply> {
  if (method !== "GET") return { status: 405, body: { error: "only GET" } };
  const u = new URL(url, "http://history");
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/(?:scheduledtasks\/([^/]+)\/(history|logs)|(usage))$/.exec(
    u.pathname,
  );
  if (!m) return { status: 404, body: { error: "not found" } };
  const namespace = m[1] ?? "";
  const task = m[2];
  const what = m[3] ?? m[4];
  if (!DNS_LABEL.test(namespace) || (task !== undefined && !DNS_LABEL.test(task)))
    return bad("namespace and task must be DNS labels");
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token)
    return { status: 401, body: { error: "a bearer token is required (Authorization: Bearer ...)" } };
  const usageTask = u.searchParams.get("task") ?? undefined;
  if (usageTask !== undefined && !DNS_LABEL.test(usageTask)) return bad("task must be a DNS label");
  const target = task ?? usageTask;
  const access: Access = target ? { namespace, verb: "get", name: target } : { namespace, verb: "list" };
  const verdict = await deps.authorizer.check(token, access);
  if (verdict === "unauthenticated") return { status: 401, body: { error: "the token is not valid" } };
  if (verdict === "forbidden") {
    const what = target ? `get scheduledtask ${target}` : "list scheduledtasks";
    return { status: 403, body: { error: `forbidden: the token may not ${what} in namespace ${namespace}` } };
  }
  if (what === "history") {
    const sinceText = u.searchParams.get("since");
    const since = sinceText ? parseSince(sinceText, deps.now()) : undefined;
    if (sinceText && !since) return bad('since must be a duration such as "24h" or an RFC 3339 time');
    const limit = Number(u.searchParams.get("limit") ?? 100);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      return bad(`limit must be an integer from 1 to ${MAX_LIMIT}`);
    const failedOnly = u.searchParams.get("failed") === "true";
    const result = u.searchParams.get("result") || undefined;
    if (result && !(EXECUTION_RESULTS as readonly string[]).includes(result))
      return bad(`result must be one of ${EXECUTION_RESULTS.join(", ")}`);
    const cursor = u.searchParams.get("cursor");
    const after = cursor ? decodeCursor(cursor) : undefined;
    if (cursor && !after) return bad("cursor is not one this endpoint gave");
    // One more than asked: whether a next page exists, without counting.
    const rows = await deps.archive.history({
      namespace,
      taskName: task ?? "",
      since,
      failedOnly,
      result,
      after,
      limit: limit + 1,
    });
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    const next = rows.length > limit && last ? encodeCursor(positionOf(last)) : undefined;
    return { status: 200, body: { items, ...(next && { next }) } };
  }
  if (what === "logs") {
    const run = await deps.archive.run(namespace, task ?? "", u.searchParams.get("run") ?? undefined);
    if (!run) return { status: 404, body: { error: "no such run in the archive" } };
    return { status: 200, body: { name: run.name, spec: run.spec } };
  }
  const month = u.searchParams.get("month") ?? deps.now().toISOString().slice(0, 7);
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) return bad("month must be YYYY-MM");
  return { status: 200, body: { month, items: await deps.archive.usage(namespace, month, usageTask) } };
}

/**
 * Serving certificate and key: files (PEM, re-read when they change; both empty: plain HTTP), or
 * the PEM text itself (from a Secret the operator read at start).
 */
export type HistoryTls = { certFile: string; keyFile: string } | { cert: string; key: string };

/** How often the certificate files are checked for a renewal. */
const TLS_RELOAD_MS = 60_000;

/**
 * Starts the endpoint (HTTPS when `o.tls` names a certificate); resolves once it listens. A
 * renewed certificate (cert-manager rewrites the mounted Secret) is picked up without a restart.
 */
export async function startHistoryServer(
  o: { host: string; port: number; log: Logger; tls?: HistoryTls },
  deps: { archive: ExecutionArchive; authorizer: Authorizer; now?: () => Date },
): Promise<Server> {
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req.method ?? "GET", req.url ?? "/", req.headers.authorization, { now: () => new Date(), ...deps })
      .catch((err: unknown) => {
        o.log.warn({ err: String(err), path: req.url?.split("?")[0] }, "history request failed");
        return { status: 503, body: { error: "the execution archive is unavailable" } };
      })
      .then((reply) => {
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(JSON.stringify(reply.body));
      });
  };
  const tls = o.tls && "certFile" in o.tls && o.tls.certFile && o.tls.keyFile ? o.tls : undefined;
  let server: Server;
  if (o.tls && "cert" in o.tls) {
    server = createHttpsServer({ cert: o.tls.cert, key: o.tls.key }, onRequest);
  } else if (tls) {
    const read = () => ({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) });
    let current = read();
    const secure = createHttpsServer(current, onRequest);
    const timer = setInterval(() => {
      try {
        const next = read();
        if (next.cert.equals(current.cert) && next.key.equals(current.key)) return;
        secure.setSecureContext(next);
        current = next;
        o.log.info({ certFile: tls.certFile }, "history endpoint certificate reloaded");
      } catch (err) {
        o.log.warn({ err: String(err), certFile: tls.certFile }, "history endpoint certificate not reloaded");
      }
    }, TLS_RELOAD_MS);
    timer.unref();
    secure.on("close", () => clearInterval(timer));
    server = secure;
  } else {
    server = createServer(onRequest);
  }
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return server;
}
