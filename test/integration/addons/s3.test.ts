import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { kubectl } from "../../support/cluster.ts";
import { type S3Target, s3List, s3Request, s3TargetFromEnv } from "../../support/s3.ts";
import { addonEnv, skipReason } from "./support.ts";

// s3 add-on: versitygw over HTTPS with a certificate of the cluster CA. An object is put, read
// back and listed with SigV4 requests whose TLS chain is verified against the CA that every pod
// gets in ConfigMap kube-root-ca.crt; wrong credentials are refused; a foreign CA is not trusted.

const reason = await skipReason("s3");

describe.skipIf(reason)("s3 add-on (versitygw over TLS)", () => {
  const env = addonEnv("s3.env") ?? {};
  let target: S3Target;
  beforeAll(() => {
    target = s3TargetFromEnv(env);
  });
  const bucket = env.S3_BUCKET ?? "";
  const caFile = env.S3_CA_FILE ?? "";

  it("serves with a certificate of the CA pods get in kube-root-ca.crt", async () => {
    const r = await kubectl([
      "get",
      "configmap",
      "kube-root-ca.crt",
      "-n",
      "default",
      "-o",
      "jsonpath={.data.ca\\.crt}",
    ]);
    expect(r.stdout.trim()).toBe(readFileSync(caFile, "utf8").trim());
    const res = await s3Request(target, "GET", "/");
    expect(res.status).toBe(200);
    expect(res.body.toString()).toContain(`<Name>${bucket}</Name>`);
  });

  it("puts, gets and lists an object; the object is a plain file of the posix backend", async () => {
    const key = `addon-test/${randomBytes(4).toString("hex")}.txt`;
    const body = `hello over TLS ${Date.now()}`;
    expect((await s3Request(target, "PUT", `/${bucket}/${key}`, body)).status).toBe(200);
    const got = await s3Request(target, "GET", `/${bucket}/${key}`);
    expect(got.status).toBe(200);
    expect(got.body.toString()).toBe(body);
    expect(await s3List(target, bucket, "addon-test/")).toContain(key);
    expect(readFileSync(`${env.S3_DATA_DIR}/${bucket}/${key}`, "utf8")).toBe(body);
    expect((await s3Request(target, "DELETE", `/${bucket}/${key}`)).status).toBe(204);
    expect((await s3Request(target, "GET", `/${bucket}/${key}`)).status).toBe(404);
  });

  it("refuses wrong credentials and is not trusted under another CA", async () => {
    const bad = await s3Request({ ...target, secretKey: "wrong-secret" }, "GET", `/${bucket}?list-type=2`);
    expect(bad.status).toBe(403);
    // The apiserver's front-proxy CA is a real CA of this cluster, but not the one that signed it.
    const other = readFileSync(caFile.replace(/ca\.crt$/, "front-proxy-ca.crt"), "utf8");
    await expect(s3Request({ ...target, ca: other }, "GET", "/")).rejects.toThrow(/certificate/i);
  });
});
