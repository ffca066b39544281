import { TOTP } from "otpauth";

// An HTTP client of the admin interface as a browser without JavaScript would be: a cookie jar,
// forms posted as application/x-www-form-urlencoded with the CSRF token of the last page.

export const ADMIN_ENV = {
  ADMIN_USERNAME: "owner",
  ADMIN_PASSWORD: "initial-Secret-42",
  CONFIG_STORE: JSON.stringify({ name: "Test Shop" }),
};
export const NEW_PASSWORD = "a-much-better-passphrase";

export interface Answer {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

export class AdminClient {
  readonly base: string;
  readonly jar = new Map<string, string>();
  /** Extra headers of every request (X-Forwarded-For). */
  headers: Record<string, string> = {};
  csrf = "";
  constructor(base: string) {
    this.base = base;
  }

  private async send(path: string, init: RequestInit): Promise<Answer> {
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const r = await fetch(this.base + path, {
      ...init,
      redirect: "manual",
      headers: {
        ...this.headers,
        ...(cookie ? { cookie } : {}),
        ...(init.headers as Record<string, string>),
      },
    });
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      const [k, v] = [pair!.slice(0, i), pair!.slice(i + 1)];
      if (v === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.jar.delete(k);
      else this.jar.set(k, v);
    }
    const html = await r.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (m?.[1]) this.csrf = m[1];
    return { status: r.status, location: r.headers.get("location"), html, headers: r.headers };
  }

  get(path: string): Promise<Answer> {
    return this.send(path, { method: "GET" });
  }

  /** Posts a form; with the last page's CSRF token unless `csrf: false`. */
  post(
    path: string,
    form: Record<string, string | string[]>,
    opts: { csrf?: boolean } = {},
  ): Promise<Answer> {
    const body = new URLSearchParams();
    if (opts.csrf !== false) body.set("_csrf", this.csrf);
    for (const [k, v] of Object.entries(form)) for (const x of [v].flat()) body.append(k, x);
    return this.send(path, {
      method: "POST",
      body: body.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
  }
}

/** The TOTP code of a base32 secret, `offsetSteps` periods from now. */
export function totpCode(secret: string, offsetSteps = 0): string {
  return new TOTP({ secret, digits: 6, period: 30, algorithm: "SHA1" }).generate({
    timestamp: Date.now() + offsetSteps * 30_000,
  });
}

/** The setup key shown on the enrolment page. */
export const secretOf = (html: string) => /data-totp-secret="([A-Z2-7]+)"/.exec(html)?.[1] ?? "";
/** The recovery codes shown once after enrolment. */
export const recoveryCodesOf = (html: string) =>
  [...html.matchAll(/<li data-recovery-code[^>]*>([^<]+)</g)].map((m) => m[1]!);

/** A client through the whole first sign-in (password change, TOTP enrolment): signed in. */
export async function signedInClient(base: string): Promise<AdminClient> {
  const c = new AdminClient(base);
  await c.get("/admin/login");
  await c.post("/admin/login", { username: ADMIN_ENV.ADMIN_USERNAME, password: ADMIN_ENV.ADMIN_PASSWORD });
  await c.get("/admin/setup");
  await c.post("/admin/setup/password", { password: NEW_PASSWORD, confirm: NEW_PASSWORD });
  const secret = secretOf((await c.get("/admin/setup")).html);
  const done = await c.post("/admin/setup/totp", { code: totpCode(secret) });
  if (recoveryCodesOf(done.html).length !== 10) throw new Error(`enrolment failed: ${done.status}`);
  return c;
}
