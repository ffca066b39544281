import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

// Debian's Chromium driven by playwright-core (Playwright's own browser download is not used:
// hack/cluster/host-deps.sh installs the `chromium` package). A fresh profile per launch, and
// no background traffic: the browser talks to the dashboard on loopback only.

/** Where Chromium is (the Debian package). */
export const CHROMIUM = process.env.CRONSCALE_CHROMIUM ?? "/usr/bin/chromium";

/** Launch flags for headless Chromium on a closed network (no sandbox user namespace, no updates, no sync). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Screenshots of every route go here (git-ignored), per test run. */
export const ARTIFACTS = fileURLToPath(new URL("../../tmp/artifacts/dashboard/", import.meta.url));

/** A launched browser and its throwaway profile. */
export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Starts headless Chromium. Playwright gives each launch a fresh --user-data-dir of its own (in
 * the temporary directory, removed on close), so no profile state crosses tests.
 */
export async function launchChromium(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  return {
    browser,
    close: () => browser.close(),
  };
}

/** Desktop and phone viewports of the screenshots. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** Full-page screenshots of the current page at desktop and phone widths; returns their paths. */
export async function screenshots(page: Page, name: string): Promise<string[]> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const out: string[] = [];
  const before = page.viewportSize();
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    const path = join(ARTIFACTS, `${name}-${label}.png`);
    await page.screenshot({ path, fullPage: true });
    out.push(path);
  }
  if (before) await page.setViewportSize(before);
  return out;
}

/** axe-core violations of impact serious or critical on the current page (WCAG 2.x A/AA rules). */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** A context as a dark-mode or light-mode viewer. */
export function newContext(b: Browser, colorScheme: "light" | "dark" = "light"): Promise<BrowserContext> {
  return b.newContext({ viewport: VIEWPORTS.desktop, colorScheme });
}
