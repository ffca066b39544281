import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";

// Errors as RFC 9457 problem details (application/problem+json). A validation problem lists each
// bad field with a JSON pointer into the request part it came from.

export const PROBLEM_TYPE_BASE = "https://cronscale.io/problems/";

export interface FieldError {
  /** JSON pointer into the request part, e.g. `#/variants/0/sku`. */
  pointer: string;
  /** Where the field is: body, query, params or header. */
  in: string;
  detail: string;
}

/** An error to answer with as a problem; throw it from a handler. */
export class Problem extends Error {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(
    status: number,
    slug: string,
    title: string,
    detail: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = status;
    this.type = PROBLEM_TYPE_BASE + slug;
    this.title = title;
    this.extra = extra;
    this.headers = headers;
  }
}

export const notFound = (what: string, id: string) =>
  new Problem(404, "not-found", "Not found", `${what} ${id} does not exist`);

/** A 422 naming one field of the body. */
export const invalidField = (pointer: string, detail: string) =>
  new Problem(422, "validation", "Invalid request", `${pointer.replace(/^#\//, "")}: ${detail}`, {
    errors: [{ pointer, in: "body", detail }],
  });

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  for (const [k, v] of Object.entries(p.headers)) reply.header(k, v);
  return reply
    .code(p.status)
    .type("application/problem+json")
    .send({
      type: p.type,
      title: p.title,
      status: p.status,
      detail: p.message,
      instance: reply.request.url,
      ...p.extra,
    });
}

export function installProblemHandlers(app: FastifyInstance): void {
  app.setNotFoundHandler((req, reply) =>
    sendProblem(
      reply,
      new Problem(404, "not-found", "Not found", `no route for ${req.method} ${req.url.split("?")[0]}`),
    ),
  );
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof Problem) return sendProblem(reply, err);
    if (hasZodFastifySchemaValidationErrors(err)) {
      const part = err.validationContext ?? "body";
      const errors: FieldError[] = err.validation.map((v) => ({
        pointer: `#${v.instancePath}`,
        in: part === "querystring" ? "query" : part,
        detail: v.message ?? "invalid",
      }));
      const names = errors.map((e) => `${e.in} ${e.pointer.replace(/^#\/?/, "") || "(root)"}: ${e.detail}`);
      return sendProblem(
        reply,
        new Problem(422, "validation", "Invalid request", names.join("; "), { errors }),
      );
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      // Fastify's own client errors (malformed JSON, unsupported media type, body too large).
      return sendProblem(reply, new Problem(err.statusCode, "bad-request", "Bad request", err.message));
    }
    req.log.error({ err }, "request failed");
    return sendProblem(
      reply,
      new Problem(500, "internal", "Internal error", "the request could not be completed"),
    );
  });
}
