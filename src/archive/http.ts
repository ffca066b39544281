import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { GROUP } from "../api/v1alpha1/kind.ts";
import { EXECUTION_RESULTS } from "../api/v1alpha1/scheduledtask.ts";
import type { KubeClient } from "../runtime/client.ts";
import type { KubeObject } from "../runtime/types.ts";
import { decodeCursor, type ExecutionArchive, encodeCursor, positionOf } from "./store.ts";

// The history endpoint: the archive read with the caller's own Kubernetes identity, then a
// SubjectAccessReview asks whether that user may `get` the task (history, logs, a task's usage)
// or `list` tasks in the namespace (namespace usage): whoever may read the task may read its
// history, nobody else. The caller's identity comes one of two ways:
//  - through the API server, as the aggregated API history.cronscale.io/v1alpha1 (an APIService
//    on this endpoint): the API server authenticates the caller by whatever the cluster uses
//    (client certificates, exec plugins, OIDC, tokens) and sends the request on with the user in
//    X-Remote-User/-Group/-Extra-* headers, over a connection made with its front-proxy client
//    certificate. Those headers are believed only from a client certificate signed by the
//    cluster's request-header CA and named in its allowed names (the ConfigMap
//    kube-system/extension-apiserver-authentication, as every aggregated API server reads it);
//  - directly, with a bearer token, checked with a TokenReview.
// Served on its own port, apart from the unauthenticated probes and metrics, over HTTPS when
// given a certificate (the bearer tokens it receives must not cross the network in clear; the
// API server only speaks HTTPS to an APIService).
//
//   GET /api/v1/namespaces/{ns}/scheduledtasks/{task}/history?since=24h&failed=true&limit=100
//       [&result=Failed][&cursor=C]: {items, next?}; `next`, when present, is the cursor of the
//       page after this one (keyset paging: newest first, a page deep in the history as fast as the first)
//   GET /api/v1/namespaces/{ns}/scheduledtasks/{task}/logs[?run=NAME]
//   GET /api/v1/namespaces/{ns}/usage?month=2026-11[&task=NAME]
//   the same under /apis/history.cronscale.io/v1alpha1/namespaces/..., and that group version's
//   discovery document (APIResourceList) at /apis/history.cronscale.io/v1alpha1

/** What a request asks to do, in RBAC terms. */
export interface Access {
  namespace: string;
  verb: "get" | "list";
  /** Task name for `get`. */
  name?: string;
}

/** A user as the API server names it (TokenReview's status.user, or the front proxy's headers). */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** Answers whether a bearer token, or a user the API server authenticated, may do `access`. */
export interface Authorizer {
  check(caller: string | UserInfo, access: Access): Promise<"allowed" | "forbidden" | "unauthenticated">;
}

/** Authorizer through the API server: TokenReview (for a token), then SubjectAccessReview. */
export class KubeAuthorizer implements Authorizer {
  private readonly client: KubeClient;
  constructor(client: KubeClient) {
    this.client = client;
  }

  async check(caller: string | UserInfo, access: Access) {
    let user: UserInfo | undefined;
    if (typeof caller === "string") {
      const review = await this.client.create<
        KubeObject & { status?: { authenticated?: boolean; user?: UserInfo } }
      >({
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        metadata: {},
        spec: { token: caller },
      });
      user = review.status?.authenticated ? review.status.user : undefined;
    } else user = caller;
    if (!user?.username) return "unauthenticated" as const;
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

/** The aggregated API's group and version (APIService v1alpha1.history.cronscale.io). */
export const HISTORY_GROUP = "history.cronscale.io";
export const HISTORY_VERSION = "v1alpha1";
const HISTORY_PREFIX = `/apis/${HISTORY_GROUP}/${HISTORY_VERSION}`;

/**
 * The group version's discovery document: what the API server's aggregator fetches to mark the
 * APIService Available, and what `kubectl api-resources` lists. Reads only (verb get).
 */
const DISCOVERY = {
  kind: "APIResourceList",
  apiVersion: "v1",
  groupVersion: `${HISTORY_GROUP}/${HISTORY_VERSION}`,
  resources: [
    {
      name: "scheduledtasks/history",
      singularName: "",
      namespaced: true,
      kind: "TaskHistory",
      verbs: ["get"],
    },
    { name: "scheduledtasks/logs", singularName: "", namespaced: true, kind: "TaskLogs", verbs: ["get"] },
    { name: "usage", singularName: "usage", namespaced: true, kind: "Usage", verbs: ["get", "list"] },
  ],
};

const ROUTE = new RegExp(
  `^(?:/api/v1|${HISTORY_PREFIX.replaceAll(".", "\\.")})/namespaces/([^/]+)/(?:scheduledtasks/([^/]+)/(history|logs)|(usage))$`,
);

/**
 * Routes and answers one request (method GET, path with query, Authorization header); `user`:
 * the caller as the API server authenticated it (front-proxy headers already verified).
 */
export async function handle(
  method: string,
  url: string,
  authorization: string | undefined,
  deps: { archive: ExecutionArchive; authorizer: Authorizer; now: () => Date },
  user?: UserInfo,
): Promise<Reply> {
  if (method !== "GET") return { status: 405, body: { error: "only GET" } };
  const u = new URL(url, "http://history");
  if (u.pathname === HISTORY_PREFIX) return { status: 200, body: DISCOVERY };
  const m = ROUTE.exec(u.pathname);
  if (!m) return { status: 404, body: { error: "not found" } };
  const namespace = m[1] ?? "";
  const task = m[2];
  const what = m[3] ?? m[4];
  if (!DNS_LABEL.test(namespace) || (task !== undefined && !DNS_LABEL.test(task)))
    return bad("namespace and task must be DNS labels");
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token && !user)
    return { status: 401, body: { error: "a bearer token is required (Authorization: Bearer ...)" } };
  const usageTask = u.searchParams.get("task") ?? undefined;
  if (usageTask !== undefined && !DNS_LABEL.test(usageTask)) return bad("task must be a DNS label");
  const target = task ?? usageTask;
  const access: Access = target ? { namespace, verb: "get", name: target } : { namespace, verb: "list" };
  const verdict = await deps.authorizer.check(user ?? token ?? "", access);
  if (verdict === "unauthenticated") return { status: 401, body: { error: "the token is not valid" } };
  if (verdict === "forbidden") {
    const what = target ? `get scheduledtask ${target}` : "list scheduledtasks";
    const who = user ? `user "${user.username}"` : "the token";
    return { status: 403, body: { error: `forbidden: ${who} may not ${what} in namespace ${namespace}` } };
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

/** Whom the endpoint believes X-Remote-* headers from: the cluster's front-proxy settings. */
export interface RequestHeaderAuth {
  /** PEM CA(s) that sign the API server's front-proxy client certificate. */
  ca: string;
  /** Common names that certificate may have; empty: any the CA signed. */
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** The front-proxy settings from the ConfigMap kube-system/extension-apiserver-authentication; undefined when it has none. */
export function requestHeaderAuthFrom(
  data: Record<string, string> | undefined,
): RequestHeaderAuth | undefined {
  const ca = data?.["requestheader-client-ca-file"];
  if (!ca) return undefined;
  const list = (key: string, fallback: string[]) => {
    try {
      const v = JSON.parse(data?.[key] ?? "null") as unknown;
      return Array.isArray(v) ? v.map(String) : fallback;
    } catch {
      return fallback;
    }
  };
  return {
    ca,
    allowedNames: list("requestheader-allowed-names", []),
    usernameHeaders: list("requestheader-username-headers", ["X-Remote-User"]),
    groupHeaders: list("requestheader-group-headers", ["X-Remote-Group"]),
    extraHeaderPrefixes: list("requestheader-extra-headers-prefix", ["X-Remote-Extra-"]),
  };
}

/**
 * The user the API server sent the request for: only over a connection whose client certificate
 * the request-header CA signed (verified by TLS) with an allowed common name; else undefined.
 */
export function frontProxyUser(
  req: IncomingMessage,
  auth: RequestHeaderAuth | undefined,
): UserInfo | undefined {
  const socket = req.socket as TLSSocket;
  if (!auth || !socket.encrypted || !socket.authorized) return undefined;
  const cn = socket.getPeerCertificate()?.subject?.CN;
  if (auth.allowedNames.length > 0 && !auth.allowedNames.includes(String(cn))) return undefined;
  // Each header line a value: a group may itself contain a comma.
  const values = (name: string) => req.headersDistinct[name.toLowerCase()] ?? [];
  const username = auth.usernameHeaders.map((h) => values(h)[0]).find((v) => v);
  if (!username) return undefined;
  const groups = auth.groupHeaders.flatMap(values);
  const extra: Record<string, string[]> = {};
  for (const prefix of auth.extraHeaderPrefixes) {
    const p = prefix.toLowerCase();
    for (const [name, v] of Object.entries(req.headersDistinct)) {
      if (!name.startsWith(p) || v === undefined) continue;
      const key = decodeURIComponent(name.slice(p.length));
      extra[key] = [...(extra[key] ?? []), ...v];
    }
  }
  return { username, groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
}

/** How often the certificate files are checked for a renewal. */
const TLS_RELOAD_MS = 60_000;

/**
 * Starts the endpoint (HTTPS when `o.tls` names a certificate); resolves once it listens. A
 * renewed certificate (cert-manager rewrites the mounted Secret) is picked up without a restart.
 */
export async function startHistoryServer(
  o: {
    host: string;
    port: number;
    log: Logger;
    tls?: HistoryTls;
    /** The front-proxy settings, asked again at each certificate check (HTTPS only). */
    requestHeader?: () => RequestHeaderAuth | undefined;
  },
  deps: { archive: ExecutionArchive; authorizer: Authorizer; now?: () => Date },
): Promise<Server> {
  let frontProxy: RequestHeaderAuth | undefined;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const user = frontProxyUser(req, frontProxy);
    handle(
      req.method ?? "GET",
      req.url ?? "/",
      req.headers.authorization,
      { now: () => new Date(), ...deps },
      user,
    )
      .catch((err: unknown) => {
        o.log.warn({ err: String(err), path: req.url?.split("?")[0] }, "history request failed");
        return { status: 503, body: { error: "the execution archive is unavailable" } };
      })
      .then((reply) => {
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(JSON.stringify(reply.body));
      });
  };
  const files = o.tls && "certFile" in o.tls && o.tls.certFile && o.tls.keyFile ? o.tls : undefined;
  const pem = o.tls && "cert" in o.tls ? o.tls : undefined;
  let server: Server;
  if (files || pem) {
    // Client certificates are asked for (never required) and verified against the request-header
    // CA only: without one, none is believed.
    const read = () => {
      frontProxy = o.requestHeader?.();
      const cert = files ? readFileSync(files.certFile) : Buffer.from(pem?.cert ?? "");
      const key = files ? readFileSync(files.keyFile) : Buffer.from(pem?.key ?? "");
      return { cert, key, ca: frontProxy?.ca ?? [] };
    };
    let current = read();
    const secure = createHttpsServer({ ...current, requestCert: true, rejectUnauthorized: false }, onRequest);
    const timer = setInterval(() => {
      try {
        const next = read();
        if (
          next.cert.equals(current.cert) &&
          next.key.equals(current.key) &&
          String(next.ca) === String(current.ca)
        )
          return;
        secure.setSecureContext(next);
        current = next;
        o.log.info(
          { certFile: files?.certFile },
          "history endpoint certificate (or request-header CA) reloaded",
        );
      } catch (err) {
        o.log.warn(
          { err: String(err), certFile: files?.certFile },
          "history endpoint certificate not reloaded",
        );
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

/**
 * The cluster's front-proxy settings, read from kube-system/extension-apiserver-authentication
 * now and every minute after (the API server rewrites it when its front-proxy CA changes). Not
 * readable (no RoleBinding to extension-apiserver-authentication-reader, or a cluster without an
 * aggregation layer): undefined, logged once, and only bearer tokens are accepted.
 */
export async function watchRequestHeaderAuth(
  client: KubeClient,
  log: Logger,
  intervalMs = TLS_RELOAD_MS,
): Promise<{ current: () => RequestHeaderAuth | undefined; stop: () => void }> {
  let current: RequestHeaderAuth | undefined;
  let warned = false;
  const read = async () => {
    try {
      const cm = await client.get<KubeObject & { data?: Record<string, string> }>(
        "v1",
        "ConfigMap",
        "kube-system",
        "extension-apiserver-authentication",
      );
      current = requestHeaderAuthFrom(cm?.data);
      if (!current && !warned) {
        warned = true;
        log.warn("the cluster has no front-proxy CA: the history endpoint accepts bearer tokens only");
      }
    } catch (err) {
      if (!warned) {
        warned = true;
        log.warn(
          { err: String(err) },
          "kube-system/extension-apiserver-authentication not readable: the history endpoint accepts bearer tokens only, not users the API server sends (APIService)",
        );
      }
    }
  };
  await read();
  const timer = setInterval(() => void read(), intervalMs);
  timer.unref();
  return { current: () => current, stop: () => clearInterval(timer) };
}

/**
 * Keeps the APIService's spec.caBundle equal to the CA of the endpoint's certificate (`ca()`: PEM),
 * now and every minute after (a renewed CA reaches the API server without a chart change): a
 * server-side apply of that one field, sent only when it differs. The APIService itself (service,
 * group, version) belongs to whoever installed it (the chart).
 */
export async function keepApiServiceCaBundle(
  client: KubeClient,
  name: string,
  ca: () => string,
  log: Logger,
  intervalMs = TLS_RELOAD_MS,
): Promise<() => void> {
  let failing = false;
  const sync = async () => {
    try {
      const want = Buffer.from(ca()).toString("base64");
      const live = await client.get<KubeObject & { spec?: { caBundle?: string } }>(
        "apiregistration.k8s.io/v1",
        "APIService",
        "",
        name,
      );
      if (!live) throw new Error(`APIService ${name} does not exist`);
      if (live.spec?.caBundle !== want) {
        await client.apply({
          apiVersion: "apiregistration.k8s.io/v1",
          kind: "APIService",
          metadata: { name },
          spec: { caBundle: want },
        });
        log.info({ apiService: name }, "APIService caBundle set to the history endpoint's CA");
      }
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err: String(err), apiService: name }, "APIService caBundle not kept");
      failing = true;
    }
  };
  await sync();
  const timer = setInterval(() => void sync(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
