// A cookie-keeping HTTP client for the store's pages, as a browser without JavaScript would use
// them: forms posted url-encoded with the page's CSRF token, redirects not followed (the test
// reads them).

export interface Page {
  status: number;
  location: string | null;
  headers: Headers;
  html: string;
}

export class StoreClient {
  readonly cookies = new Map<string, string>();
  /** CSRF token of the last page read. */
  csrf = "";
  readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  private remember(r: Response): void {
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair?.indexOf("=") ?? -1;
      if (!pair || i < 0) continue;
      const name = pair.slice(0, i);
      const value = pair.slice(i + 1);
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    return { ...(cookie ? { cookie } : {}), ...extra };
  }

  private async read(r: Response): Promise<Page> {
    this.remember(r);
    const html = await r.text();
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (m?.[1]) this.csrf = m[1];
    return { status: r.status, location: r.headers.get("location"), headers: r.headers, html };
  }

  async get(path: string): Promise<Page> {
    return this.read(await fetch(this.base + path, { headers: this.headers(), redirect: "manual" }));
  }

  /** Posts a form; the page's CSRF token is added unless `_csrf` is given (null leaves it out). */
  async post(path: string, form: Record<string, string | null>): Promise<Page> {
    const body = new URLSearchParams();
    if (!("_csrf" in form)) body.set("_csrf", this.csrf);
    for (const [k, v] of Object.entries(form)) if (v !== null) body.set(k, v);
    const r = await fetch(this.base + path, {
      method: "POST",
      headers: this.headers({ "content-type": "application/x-www-form-urlencoded" }),
      body: body.toString(),
      redirect: "manual",
    });
    return this.read(r);
  }
}

/** Text of a page without tags (for assertions on what a reader sees). */
export const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&nbsp;|\u00a0|\u202f/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, " ");
