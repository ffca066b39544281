import type { FastifyReply, FastifyRequest } from "fastify";
import { Problem } from "./problem.ts";

// Optimistic concurrency: every resource has a version (bumped by each change) sent as a strong
// ETag; an update with If-Match applies only to that version (else 412), so two clients editing
// the same product cannot silently overwrite each other.

export const etagOf = (version: number) => `"v${version}"`;

export function setEtag(reply: FastifyReply, version: number): void {
  reply.header("etag", etagOf(version));
}

/** The version If-Match asks for, or undefined without the header (`*` matches any). */
export function ifMatchVersion(req: FastifyRequest): number | undefined {
  const h = req.headers["if-match"];
  if (h === undefined || h.trim() === "*") return undefined;
  const m = /^\s*(?:W\/)?"v(\d+)"\s*$/.exec(h);
  if (!m) {
    throw new Problem(
      412,
      "precondition-failed",
      "Precondition failed",
      `If-Match ${h} is not an ETag of this API`,
    );
  }
  return Number(m[1]);
}

export const versionMismatch = (current: number) =>
  new Problem(
    412,
    "precondition-failed",
    "Precondition failed",
    `If-Match does not match the current version ${etagOf(current)}; fetch it again and retry`,
    {},
    { etag: etagOf(current) },
  );
