import { readFileSync } from "node:fs";
import { request } from "node:https";
import { isIP } from "node:net";
import aws4 from "aws4";

// A small S3 client for tests: SigV4-signed requests (aws4) over node:https, verifying the
// server against a given CA, path-style addressing (what the local versitygw add-on and
// pgBackRest use). Just enough for put/get/list/delete of objects in the tests.

/** Where an S3 server is and how to sign for it. */
export interface S3Target {
  /** https://host:port */
  url: string;
  region: string;
  accessKey: string;
  secretKey: string;
  /** PEM of the CA the server's certificate must chain to. */
  ca: string;
}

/** An answer: status and body. */
export interface S3Response {
  status: number;
  body: Buffer;
}

/** S3Target from the s3 add-on's env file ($STATE_DIR/s3.env). */
export function s3TargetFromEnv(env: Record<string, string>): S3Target {
  const need = (k: string) => {
    const v = env[k];
    if (!v) throw new Error(`s3.env has no ${k}`);
    return v;
  };
  return {
    url: need("S3_URL"),
    region: need("S3_REGION"),
    accessKey: need("S3_ACCESS_KEY"),
    secretKey: need("S3_SECRET_KEY"),
    ca: readFileSync(need("S3_CA_FILE"), "utf8"),
  };
}

/** One signed request; `path` starts with "/" (bucket, key, query). */
export function s3Request(
  t: S3Target,
  method: string,
  path: string,
  body?: Buffer | string,
): Promise<S3Response> {
  const u = new URL(t.url);
  const opts = aws4.sign(
    {
      host: u.host,
      path,
      method,
      service: "s3",
      region: t.region,
      body,
      headers: body === undefined ? {} : { "content-length": Buffer.byteLength(body) },
    },
    { accessKeyId: t.accessKey, secretAccessKey: t.secretKey },
  );
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...opts,
        hostname: u.hostname,
        port: u.port,
        ca: t.ca,
        // SNI takes names only; an IP is still checked against the certificate's IP SANs.
        ...(isIP(u.hostname) ? {} : { servername: u.hostname }),
        timeout: 20_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`S3 ${method} ${path}: timed out`)));
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** Keys of every object under `prefix` in `bucket` (ListObjectsV2, following continuation). */
export async function s3List(t: S3Target, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const q = new URLSearchParams({ "list-type": "2", prefix });
    if (token) q.set("continuation-token", token);
    const r = await s3Request(t, "GET", `/${bucket}?${q.toString()}`);
    if (r.status !== 200) throw new Error(`S3 list ${bucket}/${prefix}: ${r.status} ${r.body.toString()}`);
    const xml = r.body.toString();
    for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g)) keys.push(unescapeXml(m[1] ?? ""));
    token = /<IsTruncated>true<\/IsTruncated>/.test(xml)
      ? unescapeXml(/<NextContinuationToken>([^<]*)</.exec(xml)?.[1] ?? "")
      : undefined;
  } while (token);
  return keys;
}

function unescapeXml(s: string): string {
  return s
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&amp;", "&");
}
