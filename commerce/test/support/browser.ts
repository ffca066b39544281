import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import AxeBuilder from "@axe-core/playwright";
import { type Browser, chromium, type Page } from "playwright-core";

// Debian's Chromium (the `chromium` package; no browser download) driven by playwright-core,
// whose version is pinned to the one matching Debian's Chromium. A fresh profile per launch and no
// background traffic: the browser talks to the service on loopback only.

export const CHROMIUM = process.env.CRONSCALE_CHROMIUM ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * Full-page screenshots at desktop and phone widths into `dir` (git-ignored tmp/); returns, per width, how far the page
 * overflows the viewport sideways (0 when nothing needs horizontal scrolling).
 */
export async function screenshots(page: Page, dir: string, name: string): Promise<Record<string, number>> {
  mkdirSync(dir, { recursive: true });
  const overflow: Record<string, number> = {};
  const before = page.viewportSize();
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(dir, `${name}-${label}.png`), fullPage: true });
    overflow[label] = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  }
  if (before) await page.setViewportSize(before);
  return overflow;
}

/** axe-core violations of impact serious or critical (WCAG 2.x A/AA rules). */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return r.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** Where a suite's screenshots go (git-ignored). */
export const artifactsDir = (name: string) =>
  fileURLToPath(new URL(`../../tmp/artifacts/${name}/`, import.meta.url));
