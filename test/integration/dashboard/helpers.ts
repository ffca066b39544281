import type { FastifyInstance } from "fastify";
import type { Page } from "playwright-core";
import { KubeViewerApi } from "../../../src/dashboard/kube.ts";
import { createDashboard } from "../../../src/dashboard/server.ts";
import { type PlatformLists, platformLists } from "../../../src/dashboard/shared-read.ts";
import { silentLogger } from "../../../src/log.ts";
import { KubeListWatch } from "../../../src/runtime/listwatch.ts";
import { KubeTransport } from "../../../src/runtime/rest.ts";
import { VIEWPORTS } from "../../support/browser.ts";
import { kubeConfig, kubectl, waitFor } from "../../support/cluster.ts";

/**
 * How far the page scrolls sideways at phone width (0 when it fits): the document's scroll width
 * beyond the viewport. The desktop viewport is restored afterwards.
 */
export async function phoneOverflow(page: Page): Promise<number> {
  await page.setViewportSize(VIEWPORTS.phone);
  const over = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  await page.setViewportSize(VIEWPORTS.desktop);
  return over;
}

/**
 * Waits until the API server's authorizer answers `verb resource` for the ServiceAccount as
 * granted: a Role and RoleBinding applied a moment ago reach the RBAC authorizer's cache a little
 * later (longer on a loaded machine), and a page rendered before then hides the control.
 */
export async function waitForRbac(namespace: string, sa: string, checks: string[][]): Promise<void> {
  for (const [verb = "", resource = ""] of checks) {
    await waitFor(
      async () =>
        (
          await kubectl(["auth", "can-i", verb, resource, `--as=system:serviceaccount:${namespace}:${sa}`], {
            namespace,
            allowFailure: true,
          })
        ).stdout.trim() === "yes",
      { timeoutMs: 30_000, what: `${sa} may ${verb} ${resource}` },
    );
  }
}

/** A viewer of the browser tests: its Role's rules (YAML flow mappings) and the grants to await. */
export interface Viewer {
  rules: string[];
  /** `[verb, resource]` pairs the authorizer must grant before the viewer's pages are opened. */
  ready: string[][];
}

/**
 * One ServiceAccount per viewer in `namespace`, each with its own Role (the given rules) bound to
 * it; waits until the authorizer grants what each viewer is `ready` for, and returns their tokens.
 */
export async function createViewers<N extends string>(
  namespace: string,
  viewers: Record<N, Viewer>,
): Promise<Record<N, string>> {
  const docs = Object.entries<Viewer>(viewers).flatMap(([name, v]) => [
    `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: ${name}, namespace: ${namespace}}`,
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: ${name}, namespace: ${namespace}}\nrules:\n${v.rules.map((r) => `  - ${r}`).join("\n")}`,
    `apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: ${name}, namespace: ${namespace}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${name}}\nsubjects: [{kind: ServiceAccount, name: ${name}, namespace: ${namespace}}]`,
  ]);
  await kubectl(["apply", "-f", "-"], { input: docs.join("\n---\n") });
  const tokens = {} as Record<N, string>;
  for (const name of Object.keys(viewers) as N[]) {
    await waitForRbac(namespace, name, viewers[name].ready);
    tokens[name] = (await kubectl(["create", "token", name, "--duration=1h"], { namespace })).stdout.trim();
  }
  return tokens;
}

/**
 * The shared platforms, backups and restores lists, listed and watched with the test's own
 * credentials (as the dashboard's ServiceAccount would).
 */
export function sharedPlatformLists(): PlatformLists & { stop(): Promise<void> } {
  const own = KubeTransport.create(kubeConfig());
  return platformLists((type, ns) => new KubeListWatch(own, type, ns), silentLogger());
}

/**
 * The dashboard in this process for `namespaces`, every viewer's calls made with the viewer's own
 * token against the test cluster, its platform lists shared (sharedPlatformLists) as in the
 * chart's default; listening on loopback, `base` named `localhost` (a secure context for the
 * browser, so its Secure cookies are kept).
 */
export async function startDashboard(
  namespaces: string[],
  opts: { usageRefreshSeconds?: number } = {},
): Promise<{ app: FastifyInstance; base: string }> {
  const kc = kubeConfig();
  const lists = sharedPlatformLists();
  const app = await createDashboard({
    log: silentLogger(),
    namespaces,
    viewerApi: (t) => new KubeViewerApi(kc, t),
    platformLists: lists,
    ...opts,
  });
  app.addHook("onClose", () => lists.stop());
  const base = (await app.listen({ host: "127.0.0.1", port: 0 })).replace("127.0.0.1", "localhost");
  return { app, base };
}
