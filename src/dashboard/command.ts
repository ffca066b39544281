import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type PlatformPrices, PlatformPricesSchema } from "../api/platform-prices.ts";
import type { CliIO } from "../cli/next-runs.ts";
import { createLogger } from "../log.ts";
import { loadKubeConfig } from "../runtime/kube.ts";
import { KubeListWatch } from "../runtime/listwatch.ts";
import { KubeTransport } from "../runtime/rest.ts";
import { HttpArchiveReader } from "./archive.ts";
import { OidcSignIn, oidcSettingsFrom } from "./auth-oidc.ts";
import { type ProxyAuthSettings, proxyAuthSettingsFrom } from "./auth-proxy.ts";
import { ImpersonatingKubeConfig } from "./auth-proxy-kube.ts";
import { KubeViewerApi } from "./kube.ts";
import { createDashboard } from "./server.ts";
import { platformLists } from "./shared-read.ts";
import { SharedTaskCache, TASK_TYPE } from "./task-cache.ts";
import { SIGN_IN_PATH, TASKS_PATH } from "./views/layout.ts";

const USAGE = `usage: cronscale dashboard [--listen HOST:PORT] [--kubeconfig PATH] [--namespaces a,b] [--no-task-cache] [--no-platform-cache]
                           [--oidc-issuer-url URL --oidc-client-id ID --oidc-redirect-url URL ...]
                           [--tls-cert-file PEM --tls-key-file PEM] [--auth-proxy-client-ca-file PEM ...]

Serves the web dashboard. Viewers sign in with a Kubernetes bearer token; every action runs with
that token, so the API server's authentication and RBAC decide what each viewer may do. The
dashboard's own kubeconfig (or in-cluster ServiceAccount) names the API server and its CA, and
reads the task, platform, backup and restore lists shared by all viewers (each viewer's right
to list them is checked first).

  --listen       address to listen on (default 127.0.0.1:8090; in a pod: 0.0.0.0:8090)
  --kubeconfig   kubeconfig naming the API server (default: KUBECONFIG, in-cluster, ~/.kube/config)
  --namespaces   namespaces offered to viewers who may not list namespaces (comma-separated)
  --no-task-cache  read every task list with the viewer's own LIST instead of a shared watched copy
  --no-platform-cache  read the platforms, backups and restores lists with the viewer's own LIST
                 (and follow them live with the viewer's own WATCH) instead of shared watched copies
  --log-level    info (default), debug, warn, error

OpenID Connect sign-in (optional; the API server must trust the same issuer with the client id as
audience, since the viewer's ID token is the bearer of every request):
  --oidc-issuer-url          the issuer (https)                  env CRONSCALE_DASHBOARD_OIDC_ISSUER_URL
  --oidc-client-id           the dashboard's client id           env CRONSCALE_DASHBOARD_OIDC_CLIENT_ID
  --oidc-client-secret-file  file holding the client secret      env CRONSCALE_DASHBOARD_OIDC_CLIENT_SECRET_FILE
                             (or env CRONSCALE_DASHBOARD_OIDC_CLIENT_SECRET; neither: a public client)
  --oidc-redirect-url        public URL of /dashboard/sign-in/oidc/callback, registered at the provider
                                                                 env CRONSCALE_DASHBOARD_OIDC_REDIRECT_URL
  --oidc-post-logout-redirect-url  where the provider sends the browser after sign-out there,
                             registered at the provider (default: this dashboard's /dashboard/sign-in
                             on the redirect URL's origin)  env CRONSCALE_DASHBOARD_OIDC_POST_LOGOUT_REDIRECT_URL
  --oidc-scopes              default "openid profile email"; add offline_access where the provider
                             needs it for a refresh token        env CRONSCALE_DASHBOARD_OIDC_SCOPES
  --oidc-name                shown as "Sign in with NAME" (default: the issuer's host)
                                                                 env CRONSCALE_DASHBOARD_OIDC_NAME
  --oidc-ca-file             PEM CA bundle for the issuer's TLS (default: the system's)
                                                                 env CRONSCALE_DASHBOARD_OIDC_CA_FILE

Execution archive (optional): a task's page shows every run of the retention, read with the
viewer's token through the operator's history endpoint; without it, the runs kept as TaskExecutions:
  --history-url      the history endpoint, e.g. https://cronscale-history.cronscale-system:8081
                                                                 env CRONSCALE_DASHBOARD_HISTORY_URL
  --history-ca-file  PEM CA of the endpoint's certificate        env CRONSCALE_DASHBOARD_HISTORY_CA_FILE

Platform prices of the deploy page's estimate: the installation's price table, the same values
as the operator's controllers.scalePlatform.prices (unset: the project's list prices):
  --prices-currency, --prices-standard, --prices-professional, --prices-enterprise (monthly),
  --prices-per-vcpu, --prices-per-gib-memory, --prices-per-gib-storage (Custom, per unit and month)
                                                                 env CRONSCALE_DASHBOARD_PRICES_<NAME>

Serving TLS itself (otherwise serve it behind TLS: its cookies are Secure, which browsers accept
over plain HTTP only on localhost):
  --tls-cert-file  PEM certificate chain                         env CRONSCALE_DASHBOARD_TLS_CERT_FILE
  --tls-key-file   PEM private key                               env CRONSCALE_DASHBOARD_TLS_KEY_FILE

Trusted authenticating proxy (optional, off unless the CA is given; needs --tls-*): a request
over a connection with a client certificate of this CA names its viewer in headers, and the
dashboard acts for that viewer with its own credentials and Impersonate-* headers (its identity
needs RBAC "impersonate" on users and groups). Elsewhere those headers are removed unread:
  --auth-proxy-client-ca-file      CA of the proxy's client certificate    env CRONSCALE_DASHBOARD_AUTH_PROXY_CLIENT_CA_FILE
  --auth-proxy-allowed-names       common names the certificate may carry (comma-separated; default any)
                                                                  env CRONSCALE_DASHBOARD_AUTH_PROXY_ALLOWED_NAMES
  --auth-proxy-user-headers        default X-Remote-User           env CRONSCALE_DASHBOARD_AUTH_PROXY_USER_HEADERS
  --auth-proxy-group-headers       default X-Remote-Group          env CRONSCALE_DASHBOARD_AUTH_PROXY_GROUP_HEADERS
  --auth-proxy-extra-headers-prefix  e.g. X-Remote-Extra- (default: extras not accepted)
                                                                  env CRONSCALE_DASHBOARD_AUTH_PROXY_EXTRA_HEADERS_PREFIX`;

/** `cronscale dashboard`: runs until SIGINT/SIGTERM; returns the exit code. */
export async function dashboardCommand(argv: string[], io: CliIO): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      allowNegative: true,
      options: {
        listen: { type: "string", default: process.env.CRONSCALE_DASHBOARD_LISTEN ?? "127.0.0.1:8090" },
        kubeconfig: { type: "string" },
        namespaces: { type: "string", default: process.env.CRONSCALE_DASHBOARD_NAMESPACES ?? "" },
        "log-level": { type: "string", default: "info" },
        "task-cache": { type: "boolean", default: true },
        "platform-cache": { type: "boolean", default: true },
        ...envFlags("oidc", [
          "issuer-url",
          "client-id",
          "client-secret-file",
          "redirect-url",
          "post-logout-redirect-url",
          "scopes",
          "name",
          "ca-file",
        ]),
        ...envFlags("tls", ["cert-file", "key-file"]),
        ...envFlags("history", ["url", "ca-file"]),
        ...envFlags("prices", PRICE_FLAGS),
        ...envFlags("auth-proxy", [
          "client-ca-file",
          "allowed-names",
          "user-headers",
          "group-headers",
          "extra-headers-prefix",
        ]),
        help: { type: "boolean", short: "h" },
      },
    }).values;
  } catch (e) {
    io.err(`error: ${(e as Error).message}`);
    io.err(USAGE);
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const listen = String(values.listen);
  const m = /^(.*):(\d+)$/.exec(listen);
  if (!m) {
    io.err(`error: --listen must be HOST:PORT, got "${listen}"`);
    return 2;
  }
  let oidc: OidcSignIn | undefined;
  let tls: { cert: Buffer; key: Buffer } | undefined;
  let proxy: ProxyAuthSettings | undefined;
  let archive: HttpArchiveReader | undefined;
  let prices: PlatformPrices;
  try {
    const str = (k: string) => (values[k] as string | undefined) || undefined;
    const historyUrl = str("history-url");
    archive = historyUrl ? new HttpArchiveReader(historyUrl, str("history-ca-file")) : undefined;
    prices = pricesFrom(str);
    const settings = oidcSettingsFrom({
      issuerUrl: str("oidc-issuer-url"),
      clientId: str("oidc-client-id"),
      clientSecret: process.env.CRONSCALE_DASHBOARD_OIDC_CLIENT_SECRET,
      clientSecretFile: str("oidc-client-secret-file"),
      scopes: str("oidc-scopes"),
      redirectUrl: str("oidc-redirect-url"),
      postLogoutRedirectUrl: str("oidc-post-logout-redirect-url"),
      name: str("oidc-name"),
      caFile: str("oidc-ca-file"),
    });
    oidc = settings && new OidcSignIn(settings);
    const certFile = str("tls-cert-file");
    const keyFile = str("tls-key-file");
    if (Boolean(certFile) !== Boolean(keyFile))
      throw new Error("--tls-cert-file and --tls-key-file go together");
    tls = certFile && keyFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : undefined;
    const caFile = str("auth-proxy-client-ca-file");
    proxy = proxyAuthSettingsFrom(
      {
        clientCaPem: caFile && readFileSync(caFile, "utf8"),
        allowedNames: str("auth-proxy-allowed-names"),
        userHeaders: str("auth-proxy-user-headers"),
        groupHeaders: str("auth-proxy-group-headers"),
        extraHeadersPrefix: str("auth-proxy-extra-headers-prefix"),
      },
      tls !== undefined,
    );
  } catch (e) {
    io.err(`error: ${(e as Error).message}`);
    return 2;
  }
  const kc = loadKubeConfig(values.kubeconfig as string | undefined);
  const log = createLogger({ level: String(values["log-level"]) }).child({ component: "dashboard" });
  const namespaces = String(values.namespaces)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  // The shared lists are read as the dashboard itself (see list-cache.ts).
  const transport = KubeTransport.create(kc);
  const taskCache = values["task-cache"]
    ? new SharedTaskCache({ log, sourceFor: (ns) => new KubeListWatch(transport, TASK_TYPE, ns) })
    : undefined;
  const lists = values["platform-cache"]
    ? platformLists((type, ns) => new KubeListWatch(transport, type, ns), log)
    : undefined;
  const app = await createDashboard({
    log,
    namespaces,
    taskCache,
    platformLists: lists,
    oidc,
    viewerApi: (token) => new KubeViewerApi(kc, token),
    tls,
    archive,
    prices,
    proxyAuth: proxy && {
      settings: proxy,
      viewerApi: (id) => new KubeViewerApi(kc, new ImpersonatingKubeConfig(kc, id)),
    },
  });
  oidc
    ?.discover()
    .catch((err: Error) => log.warn({ err: err.message }, "OIDC discovery failed; retried at sign-in"));
  const address = await app.listen({ host: m[1] || "0.0.0.0", port: Number(m[2]) });
  io.out(
    `dashboard: ${address.replace("127.0.0.1", "localhost")}${TASKS_PATH} (sign in at ${SIGN_IN_PATH} with a bearer token${oidc ? ` or with ${oidc.settings.name}` : ""}${proxy ? "; viewers of the authenticating proxy are signed in by it" : ""})`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await app.close();
  await taskCache?.stop();
  await lists?.stop();
  return 0;
}

/** The price table's flags (--prices-<name>), in PlatformPricesSchema's order. */
const PRICE_FLAGS = [
  "currency",
  "standard",
  "professional",
  "enterprise",
  "per-vcpu",
  "per-gib-memory",
  "per-gib-storage",
];

/** The installation's price table from the --prices-* flags (unset ones: the project's list prices). */
function pricesFrom(str: (k: string) => string | undefined): PlatformPrices {
  const r = PlatformPricesSchema.safeParse({
    currency: str("prices-currency"),
    Standard: str("prices-standard"),
    Professional: str("prices-professional"),
    Enterprise: str("prices-enterprise"),
    perVcpu: str("prices-per-vcpu"),
    perGiBMemory: str("prices-per-gib-memory"),
    perGiBStorage: str("prices-per-gib-storage"),
  });
  if (!r.success)
    throw new Error(
      `--prices-*: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return r.data;
}

/** The --<group>-<name> flags, each defaulting to its CRONSCALE_DASHBOARD_<GROUP>_<NAME> variable. */
function envFlags(group: string, names: string[]): Record<string, { type: "string"; default?: string }> {
  const flags: Record<string, { type: "string"; default?: string }> = {};
  for (const name of names) {
    const flag = `${group}-${name}`;
    const env = process.env[`CRONSCALE_DASHBOARD_${flag.toUpperCase().replaceAll("-", "_")}`];
    flags[flag] = env === undefined ? { type: "string" } : { type: "string", default: env };
  }
  return flags;
}
