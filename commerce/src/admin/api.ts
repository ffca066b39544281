import type { FastifyInstance } from "fastify";

// The admin's pages call the API's own handlers in-process (fastify inject), as GraphQL does:
// validation, scopes, events, webhooks and errors have one implementation. The credential is an
// in-process one with every scope (Authenticator.internalCredential); the internal-request header
// exempts these calls from the API's per-credential rate limit (the admin is one person).

export class ApiError extends Error {
  readonly status: number;
  readonly problem: { detail?: string; title?: string; errors?: { pointer: string; detail: string }[] };
  constructor(status: number, problem: ApiError["problem"]) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
    this.status = status;
    this.problem = problem ?? {};
  }
}

export class AdminApi {
  private readonly app: FastifyInstance;
  private readonly credential: string;
  private readonly internalToken: string;
  constructor(app: FastifyInstance, credential: string, internalToken: string) {
    this.app = app;
    this.credential = credential;
    this.internalToken = internalToken;
  }

  async call<T>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: object): Promise<T> {
    const r = await this.app.inject({
      method,
      url: `/api/v1${path}`,
      headers: {
        // A name no Ingress host can have (.invalid is reserved): the API's host check lets
        // requests to unknown names through, as for probes.
        host: "admin.internal.invalid",
        authorization: `Bearer ${this.credential}`,
        "x-internal-request": this.internalToken,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    const parsed = r.body ? JSON.parse(r.body) : undefined;
    if (r.statusCode >= 400) throw new ApiError(r.statusCode, parsed);
    return parsed as T;
  }

  get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") p.set(k, String(v));
    const qs = p.toString();
    return this.call<T>("GET", qs ? `${path}?${qs}` : path);
  }
}
