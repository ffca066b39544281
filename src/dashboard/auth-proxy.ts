import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";

// Trusted authenticating proxy, on the model of kube-apiserver's requestheader authentication:
// a proxy in front of the dashboard signs its users in and names them in request headers. Those
// headers are believed only on a TLS connection whose client certificate was signed by the
// configured CA (and, when allowed names are set, carries one of those common names); on any
// other request they are removed unread, so a client that reaches the dashboard directly cannot
// name itself. The dashboard then acts for the viewer with its own credentials plus
// Impersonate-* headers (auth-proxy-kube.ts), so the API server's RBAC applies to the viewer.

/** How the proxy is recognised and where it puts the viewer's identity. */
export interface ProxyAuthSettings {
  /** PEM of the CA that signs the proxy's client certificate (the TLS listener's `ca`). */
  clientCaPem: string;
  /** Common names the proxy's certificate may carry; empty: any certificate of the CA. */
  allowedNames: string[];
  /** Headers naming the user, the first non-empty one wins (default X-Remote-User). */
  userHeaders: string[];
  /** Headers naming groups, each header line one group (default X-Remote-Group). */
  groupHeaders: string[];
  /** Prefixes of headers carrying extra attributes (`<prefix><key>: value`); empty: none accepted. */
  extraHeaderPrefixes: string[];
}

/** The viewer the proxy vouches for. */
export interface ProxyIdentity {
  username: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** Why a request's identity headers were not believed (logged), or undefined when they were. */
export type ProxyRefusal =
  | "no client certificate"
  | "certificate not signed by the proxy CA"
  | "name not allowed";

export const DEFAULT_USER_HEADERS = ["X-Remote-User"];
export const DEFAULT_GROUP_HEADERS = ["X-Remote-Group"];

const list = (v: string | undefined, fallback: string[]) => {
  const items = (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length ? items : fallback;
};

const HEADER_NAME = /^[A-Za-z0-9-]+$/;

/** Settings from flags; undefined when no client CA is given (the mode is off). */
export function proxyAuthSettingsFrom(
  input: {
    clientCaPem?: string;
    allowedNames?: string;
    userHeaders?: string;
    groupHeaders?: string;
    extraHeadersPrefix?: string;
  },
  hasTls: boolean,
): ProxyAuthSettings | undefined {
  const others = [input.allowedNames, input.userHeaders, input.groupHeaders, input.extraHeadersPrefix];
  if (!input.clientCaPem) {
    if (others.some(Boolean)) throw new Error("--auth-proxy-* flags need --auth-proxy-client-ca-file");
    return undefined;
  }
  if (!input.clientCaPem.includes("-----BEGIN CERTIFICATE-----"))
    throw new Error("--auth-proxy-client-ca-file holds no PEM certificate");
  if (!hasTls)
    throw new Error(
      "--auth-proxy-client-ca-file needs --tls-cert-file and --tls-key-file (the proxy authenticates with a client certificate)",
    );
  const s: ProxyAuthSettings = {
    clientCaPem: input.clientCaPem,
    allowedNames: list(input.allowedNames, []),
    userHeaders: list(input.userHeaders, DEFAULT_USER_HEADERS),
    groupHeaders: list(input.groupHeaders, DEFAULT_GROUP_HEADERS),
    extraHeaderPrefixes: list(input.extraHeadersPrefix, []),
  };
  for (const h of [...s.userHeaders, ...s.groupHeaders, ...s.extraHeaderPrefixes]) {
    if (!HEADER_NAME.test(h)) throw new Error(`--auth-proxy-*-headers: "${h}" is not a header name`);
  }
  return s;
}

/** Whether the request's connection is the proxy: a verified client certificate of the CA, an allowed name. */
export function proxyRefusal(req: IncomingMessage, s: ProxyAuthSettings): ProxyRefusal | undefined {
  const sock = req.socket as Partial<TLSSocket>;
  if (!sock.encrypted || typeof sock.getPeerCertificate !== "function") return "no client certificate";
  const peer = sock.getPeerCertificate();
  if (!peer || Object.keys(peer).length === 0) return "no client certificate";
  // The listener asks for a certificate but lets the handshake through without one (viewers
  // sign in directly too); `authorized` says whether it chains to the configured CA.
  if (!sock.authorized) return "certificate not signed by the proxy CA";
  if (s.allowedNames.length > 0) {
    const cn = peer.subject?.CN;
    const names = Array.isArray(cn) ? cn : [cn];
    if (!names.some((n) => n !== undefined && s.allowedNames.includes(n))) return "name not allowed";
  }
  return undefined;
}

/** Whether a header (lower-case name) is one the proxy sets. */
export function isIdentityHeader(name: string, s: ProxyAuthSettings): boolean {
  const n = name.toLowerCase();
  return (
    s.userHeaders.some((h) => h.toLowerCase() === n) ||
    s.groupHeaders.some((h) => h.toLowerCase() === n) ||
    s.extraHeaderPrefixes.some((p) => n.startsWith(p.toLowerCase()))
  );
}

/**
 * Reads the identity headers of a request already known to come from the proxy; undefined when
 * they name no user (the request is then treated like any other, as the API server does).
 */
export function readIdentity(req: IncomingMessage, s: ProxyAuthSettings): ProxyIdentity | undefined {
  // headersDistinct keeps each header line apart (headers joins repeats with ", "): one group per line.
  const values = (name: string) => (req.headersDistinct[name.toLowerCase()] ?? []).filter((v) => v !== "");
  const username = s.userHeaders.map((h) => values(h)[0]).find(Boolean);
  if (!username) return undefined;
  const groups = s.groupHeaders.flatMap(values);
  const extra: Record<string, string[]> = {};
  for (const [name, vs] of Object.entries(req.headersDistinct)) {
    const prefix = s.extraHeaderPrefixes.find((p) => name.startsWith(p.toLowerCase()));
    if (!prefix || !vs) continue;
    // Like the API server: the rest of the name, unescaped and lower-cased, is the key.
    let key: string;
    try {
      key = decodeURIComponent(name.slice(prefix.length)).toLowerCase();
    } catch {
      continue;
    }
    if (key) extra[key] = [...(extra[key] ?? []), ...vs];
  }
  return { username, groups, extra };
}

/** Removes the identity headers from a request so nothing after this reads them. */
export function stripIdentityHeaders(req: IncomingMessage, s: ProxyAuthSettings): string[] {
  const removed: string[] = [];
  for (const name of Object.keys(req.headers)) {
    if (isIdentityHeader(name, s)) {
      delete req.headers[name];
      removed.push(name);
    }
  }
  // headersDistinct is computed once and cached by Node; clear our names from it too.
  for (const name of Object.keys(req.headersDistinct)) {
    if (isIdentityHeader(name, s)) delete req.headersDistinct[name];
  }
  const raw: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const [name = "", value = ""] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
    if (!isIdentityHeader(name, s)) raw.push(name, value);
  }
  req.rawHeaders = raw;
  return removed;
}

/**
 * The proxy's viewer for this request, or undefined; the identity headers are gone from the
 * request afterwards either way. `refused` names why headers that were sent were not believed.
 */
export function takeProxyIdentity(
  req: IncomingMessage,
  s: ProxyAuthSettings,
): { identity?: ProxyIdentity; refused?: ProxyRefusal } {
  const sent = Object.keys(req.headers).some((n) => isIdentityHeader(n, s));
  const refusal = proxyRefusal(req, s);
  const identity = refusal ? undefined : readIdentity(req, s);
  stripIdentityHeaders(req, s);
  return { identity, refused: sent && refusal ? refusal : undefined };
}

/** A stable key of an identity: a session made for one identity is never used for another. */
export function identityKey(id: ProxyIdentity): string {
  const extra = Object.keys(id.extra)
    .sort()
    .map((k) => [k, id.extra[k]]);
  return JSON.stringify([id.username, id.groups, extra]);
}
