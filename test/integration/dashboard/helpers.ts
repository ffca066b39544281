import type { Page } from "playwright-core";
import { VIEWPORTS } from "../../support/browser.ts";
import { kubectl, waitFor } from "../../support/cluster.ts";

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
