import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { API_VERSION, allKinds } from "../../../src/api/v1alpha1/index.ts";

// The samples are the first thing a user applies: they must pass the same schemas the CRDs are
// generated from (the CEL rules are exercised against the apiserver in test/integration/api).
const dir = fileURLToPath(new URL("../../../manifests/samples/", import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));

describe("manifests/samples", () => {
  it("has a ScheduledTask per language and a ScalePlatform", () => {
    const docs = files.flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => d.toJS()),
    );
    const langs = docs.filter((d) => d.kind === "ScheduledTask").map((d) => d.spec.language);
    expect(langs.sort()).toEqual(["Bash", "Bun", "Go", "Python"]);
    expect(docs.some((d) => d.kind === "ScalePlatform")).toBe(true);
  });

  it("every Secret a sample ScalePlatform refers to is in the samples, with the key it names", () => {
    const docs = files.flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => d.toJS()),
    );
    const secrets = new Map<string, Record<string, string>>(
      docs.filter((d) => d.kind === "Secret").map((d) => [d.metadata.name, d.stringData ?? {}]),
    );
    const refs = docs
      .filter((d) => d.kind === "ScalePlatform")
      .flatMap((d) => [
        d.spec.email?.smtp?.passwordSecretRef,
        ...(d.spec.webhooks ?? []).map((w: { signingSecretRef?: unknown }) => w.signingSecretRef),
      ])
      .filter(Boolean) as { name: string; key: string }[];
    expect(refs.length).toBeGreaterThan(0);
    for (const r of refs) expect(secrets.get(r.name)?.[r.key], `${r.name}/${r.key}`).toBeTypeOf("string");
  });

  it.each(files)("%s parses with its kind's schema", (file) => {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), "utf8"))) {
      const obj = doc.toJS();
      // Plain Secrets the samples refer to (checked above).
      if (obj.apiVersion === "v1" && obj.kind === "Secret") continue;
      expect(obj.apiVersion).toBe(API_VERSION);
      const kind = allKinds.find((k) => k.kind === obj.kind);
      expect(kind, `unknown kind ${obj.kind}`).toBeDefined();
      const parsed = kind!.specSchema.safeParse(obj.spec);
      expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    }
  });
});
