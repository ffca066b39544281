import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { imageBuild, parseBuildLine } from "../../test/support/images.ts";
import { readTar, type TarEntry } from "./tar.ts";

const imagesDir = fileURLToPath(new URL(".", import.meta.url));
const goPath = ["/usr/local/go/bin", process.env.PATH].join(":");
const haveGo = spawnSync("go", ["version"], { env: { ...process.env, PATH: goPath } }).status === 0;
const haveApt = spawnSync("apt-cache", ["--version"]).status === 0;
const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

interface Parsed {
  files: Map<string, TarEntry>;
  index: { manifests: { digest: string; annotations: Record<string, string> }[] };
  manifest: { config: { digest: string }; layers: { digest: string; size: number }[] };
  config: { config: { User?: string }; rootfs: { diff_ids: string[] } };
}

/** Reads an image archive and follows index → manifest → config. */
function parseArchive(path: string): Parsed {
  const files = new Map(readTar(readFileSync(path)).map((e) => [e.name, e]));
  const json = (name: string) => JSON.parse(files.get(name)?.data.toString("utf8") ?? "null");
  const blob = (digest: string) => `blobs/sha256/${digest.replace("sha256:", "")}`;
  const index = json("index.json");
  const manifest = json(blob(index.manifests[0].digest));
  return { files, index, manifest, config: json(blob(manifest.config.digest)) };
}

describe("test/support/images parseBuildLine", () => {
  it("accepts REF<TAB>ARCHIVE and rejects anything else", () => {
    expect(parseBuildLine("cronscale.local/shell:0123456789ab\t/c/x.tar\n")).toEqual({
      ref: "cronscale.local/shell:0123456789ab",
      archive: "/c/x.tar",
    });
    expect(() => parseBuildLine("cronscale.local/shell:latest\t/c/x.tar")).toThrow(/unexpected output/);
    expect(() => parseBuildLine("images: error")).toThrow(/unexpected output/);
  });
});

describe.skipIf(!haveGo)("image builder (Go)", () => {
  it("passes its own tests: determinism, digests, layer entries", () => {
    const r = spawnSync("go", ["test", "-count=1", "./..."], {
      cwd: `${imagesDir}builder`,
      env: { ...process.env, PATH: goPath, CGO_ENABLED: "0" },
      encoding: "utf8",
    });
    expect(r.stdout + r.stderr).toMatch(/^ok\s/m);
    expect(r.status).toBe(0);
  }, 300_000);
});
if (!haveGo) console.log("skipping image builder tests: no go in PATH or /usr/local/go/bin");

describe.skipIf(!haveGo)("hack/images/build.sh pause", () => {
  it("names the image after its manifest digest and answers from the cache", () => {
    const { ref, archive } = imageBuild("pause");
    expect(ref).toMatch(/^cronscale\.local\/pause:[0-9a-f]{12}$/);
    const img = parseArchive(archive);
    const desc = img.index.manifests[0];
    expect(desc?.annotations["io.containerd.image.name"]).toBe(ref);
    expect(ref.endsWith(`:${desc?.digest.slice("sha256:".length, "sha256:".length + 12)}`)).toBe(true);
    for (const [name, entry] of img.files) {
      if (/^blobs\/sha256\/[0-9a-f]{64}$/.test(name)) expect(sha256(entry.data)).toBe(name.slice(13));
    }
    const layer = img.files.get(`blobs/sha256/${img.manifest.layers[0]?.digest.slice(7)}`);
    const entries = readTar(layer?.data ?? Buffer.alloc(0));
    expect(entries.map((e) => e.name)).toEqual(["pause"]);
    expect(entries[0]?.mode).toBe(0o755);
    // A second run is a cache hit with the same answer.
    const t0 = Date.now();
    const again = execFileSync("bash", [`${imagesDir}build.sh`, "pause"], { encoding: "utf8" });
    expect(parseBuildLine(again)).toEqual({ ref, archive });
    expect(Date.now() - t0).toBeLessThan(20_000);
  }, 600_000);
});

describe.skipIf(!haveGo || !haveApt)("hack/images/build.sh shell", () => {
  it("holds bash as /bin/sh, a merged /usr, the non-root user and a sticky /tmp", () => {
    const img = parseArchive(imageBuild("shell").archive);
    expect(img.config.config.User).toBe("65532:65532");
    const layer = img.files.get(`blobs/sha256/${img.manifest.layers[0]?.digest.slice(7)}`);
    const entries = new Map(readTar(layer?.data ?? Buffer.alloc(0)).map((e) => [e.name, e]));
    expect(entries.get("bin")).toMatchObject({ type: "symlink", linkname: "usr/bin" });
    expect(entries.get("usr/bin/sh")).toMatchObject({ type: "symlink", linkname: "bash" });
    expect(entries.get("usr/bin/bash")).toMatchObject({ type: "file", uid: 0 });
    expect(entries.get("tmp/")?.mode).toBe(0o1777);
    expect(entries.get("etc/passwd")?.data.toString()).toMatch(/^nonroot:x:65532:65532:/m);
    expect(entries.get("home/nonroot/")?.uid).toBe(65532);
    expect([...entries.keys()].some((n) => n.startsWith("usr/share/doc/"))).toBe(false);
    // The closure follows dependencies but not the excluded parts of the essential set.
    expect(entries.get("usr/lib/x86_64-linux-gnu/libc.so.6")).toBeDefined();
    expect(entries.get("usr/bin/tini")).toMatchObject({ type: "file", mode: 0o755 });
    expect(entries.has("usr/bin/perl")).toBe(false);
    expect(entries.has("usr/bin/dpkg")).toBe(false);
    expect(`sha256:${sha256(gunzip(layer?.data))}`).toBe(img.config.rootfs.diff_ids[0]);
  }, 900_000);
});
if (!haveApt) console.log("skipping the shell image test: no apt-cache (not a Debian host)");

function gunzip(b: Buffer | undefined): Buffer {
  return execFileSync("gzip", ["-dc"], { input: b ?? Buffer.alloc(0), maxBuffer: 1 << 30 });
}
