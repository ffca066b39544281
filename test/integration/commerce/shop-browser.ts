import { createHash, X509Certificate } from "node:crypto";
import { mkdirSync } from "node:fs";
import https from "node:https";
import { join } from "node:path";
import tls from "node:tls";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "../../support/browser.ts";
import { ingressPorts, localCa } from "../scaleplatform/operator.ts";

// Debian's Chromium reaching a platform's hosts the way a user's browser does — HTTPS with the
// real host names (SNI, Host header, certificate names) — while every connection goes to the
// Ingress controller's loopback port: Chromium's host resolver maps the names there. The
// certificate chain is the cluster CA's, which Chromium does not know; it is accepted for the keys
// of that CA and of the certificate Traefik serves (verified against the CA here first), and for
// nothing else.

/** Screenshots of the store and admin pages through the cluster (git-ignored). */
export const SHOP_ARTIFACTS = fileURLToPath(new URL("../../../tmp/artifacts/shop/", import.meta.url));

/** base64 SHA-256 of a certificate's SubjectPublicKeyInfo (Chromium's SPKI pin format). */
function spkiHash(cert: X509Certificate): string {
  const der = cert.publicKey.export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("base64");
}

/** The certificate Traefik serves for `host`, verified against the cluster CA. */
function servedCertificate(host: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const s = tls.connect(
      {
        host: "127.0.0.1",
        port: ingressPorts().https,
        servername: host,
        ca: localCa(),
        rejectUnauthorized: true,
      },
      () => {
        const raw = s.getPeerCertificate().raw;
        s.end();
        resolve(new X509Certificate(raw));
      },
    );
    s.on("error", reject);
  });
}

/** Chromium with `hosts` resolved to Traefik's loopback HTTPS port and the cluster CA accepted. */
export async function launchThroughIngress(hosts: string[]): Promise<Browser> {
  const port = ingressPorts().https;
  const pins = new Set([spkiHash(new X509Certificate(localCa()))]);
  for (const h of hosts) pins.add(spkiHash(await servedCertificate(h)));
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      ...CHROMIUM_ARGS,
      `--host-resolver-rules=${hosts.map((h) => `MAP ${h} 127.0.0.1:${port}`).join(",")}, EXCLUDE localhost`,
      `--ignore-certificate-errors-spki-list=${[...pins].join(",")}`,
    ],
  });
}

/** Full-page screenshots at 1280 and 390 px; returns how far each scrolls sideways (px). */
export async function shopScreenshots(page: Page, name: string): Promise<Record<string, number>> {
  mkdirSync(SHOP_ARTIFACTS, { recursive: true });
  const before = page.viewportSize();
  const overflow: Record<string, number> = {};
  for (const [label, width] of [
    ["desktop", 1280],
    ["phone", 390],
  ] as const) {
    await page.setViewportSize({ width, height: label === "phone" ? 844 : 800 });
    await page.screenshot({ path: join(SHOP_ARTIFACTS, `${name}-${label}.png`), fullPage: true });
    overflow[label] = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
  }
  if (before) await page.setViewportSize(before);
  return overflow;
}

/**
 * GET https://<host><path> through Traefik from a chosen loopback source address (every 127/8
 * address is this machine's): the client address Traefik sees, and reports to the app, is `from`.
 */
export function getFrom(
  from: string,
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: "127.0.0.1",
        port: ingressPorts().https,
        localAddress: from,
        servername: host,
        ca: localCa(),
        agent: false,
        path,
        headers: { ...headers, host },
        timeout: 15_000,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}
