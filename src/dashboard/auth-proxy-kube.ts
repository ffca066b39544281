import type { RequestOptions } from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { type Dispatcher, getGlobalDispatcher } from "undici";
import type { ProxyIdentity } from "./auth-proxy.ts";

// The dashboard's own credentials (its kubeconfig or in-cluster ServiceAccount) plus the
// Impersonate-* headers of one viewer the trusted proxy named. The API server checks that the
// dashboard may impersonate (RBAC verb `impersonate` on users, groups, userextras), then
// authorizes the request as the viewer alone: the dashboard's own rights play no part in it.

const IMPERSONATE = /^impersonate-/i;

/** The Impersonate-* headers for `id`; a repeated header is an array (one line per value). */
export function impersonationHeaders(id: ProxyIdentity): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { "Impersonate-User": id.username };
  if (id.groups.length) h["Impersonate-Group"] = [...id.groups];
  for (const [key, values] of Object.entries(id.extra)) {
    // The API server unescapes the key; escape what a header name cannot carry (encodeURIComponent
    // leaves "(" and ")", which are no header-name characters).
    const escaped = encodeURIComponent(key).replaceAll("(", "%28").replaceAll(")", "%29");
    h[`Impersonate-Extra-${escaped}`] = [...values];
  }
  return h;
}

type Headers = Record<string, string | string[] | undefined> | string[] | null | undefined;

/** `headers` without any Impersonate-* of their own, plus those of `id`. */
function withImpersonation(headers: Headers, id: ProxyIdentity): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const [k = "", v = ""] = [headers[i], headers[i + 1]];
      if (!IMPERSONATE.test(k)) out[k] = v;
    }
  } else {
    for (const [k, v] of Object.entries(headers ?? {}))
      if (v !== undefined && !IMPERSONATE.test(k)) out[k] = v;
  }
  return { ...out, ...impersonationHeaders(id) };
}

/**
 * A kubeconfig that authenticates as `base` does and impersonates `id` on every request. The
 * headers are added to the HTTPS options (the transport's requests, which send a repeated header
 * as one line per value, and node:https requests such as pod logs) and, for client-node's own
 * fetch-based requests, at the undici dispatcher (fetch would join repeated headers into one
 * line, which the API server would read as a single group).
 */
export class ImpersonatingKubeConfig extends KubeConfig {
  private readonly identity: ProxyIdentity;

  constructor(base: KubeConfig, identity: ProxyIdentity) {
    super();
    this.loadFromOptions({
      clusters: base.clusters,
      users: base.users,
      contexts: base.contexts,
      currentContext: base.getCurrentContext(),
    });
    this.identity = identity;
  }

  override async applySecurityAuthentication(
    ctx: Parameters<KubeConfig["applySecurityAuthentication"]>[0],
  ): Promise<void> {
    await super.applySecurityAuthentication(ctx);
    const id = this.identity;
    const base = (ctx.getDispatcher() as Dispatcher | undefined) ?? getGlobalDispatcher();
    ctx.setDispatcher(
      base.compose(
        (dispatch) => (opts, handler) =>
          dispatch({ ...opts, headers: withImpersonation(opts.headers as Headers, id) }, handler),
      ) as never,
    );
  }

  override async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    opts.headers = withImpersonation(opts.headers as Headers, this.identity);
  }
}
