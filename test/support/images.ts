import { execFileSync } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";

/** Names of the images the project builds locally (hack/images/recipes/NAME.sh). */
export const IMAGE_NAMES = [
  "pause",
  "shell",
  "bash",
  "python",
  "go",
  "bun",
  "node",
  "postgres",
  "commerce",
  "kubeprobe",
] as const;

/** One of the locally built images. */
export type ImageName = (typeof IMAGE_NAMES)[number];

/** A built image: its reference and the archive `ctr images import` / `docker load` take. */
export interface ImageBuild {
  ref: string;
  archive: string;
}

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const builds = new Map<string, ImageBuild>();

/** Parses one line of `hack/images/build.sh` output ("REF<TAB>ARCHIVE"). */
export function parseBuildLine(line: string): ImageBuild {
  const [ref, archive, ...rest] = line.trim().split("\t");
  if (!ref || !archive || rest.length > 0 || !/^[a-z0-9./-]+:[0-9a-f]{12}$/.test(ref)) {
    throw new Error(`unexpected output of hack/images/build.sh: ${JSON.stringify(line)}`);
  }
  return { ref, archive };
}

/** Env variable that replaces a local image by another reference (e.g. on a user's cluster). */
export function imageOverrideVar(name: string): string {
  return `CRONSCALE_IMAGE_${name.toUpperCase()}`;
}

/**
 * Directory where the integration run keeps the answers of hack/images/build.sh, one file per
 * image (test/integration/setup/global.ts makes it per run), or undefined outside that run.
 */
function runBuildsDir(): string | undefined {
  try {
    return inject("imageBuildsDir") || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Builds the image (or finds it in the cache) and returns its reference and archive; the answer
 * is remembered for the life of the process and, in an integration run, for the whole run (every
 * test file asks for the same images; a warm build.sh still resolves the package versions and
 * hashes the sources, seconds per image on a loaded machine). A build can take minutes the first
 * time: call it from a setup hook, not from a test body with a short timeout.
 */
export function imageBuild(name: ImageName): ImageBuild {
  const known = builds.get(name);
  if (known) return known;
  const dir = runBuildsDir();
  const file = dir ? join(dir, name) : undefined;
  let line: string | undefined;
  try {
    line = file ? readFileSync(file, "utf8") : undefined;
  } catch {
    line = undefined;
  }
  if (!line) {
    line = execFileSync("bash", [`${repoRoot}hack/images/build.sh`, name], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 1 << 20,
    });
    if (file) {
      writeFileSync(`${file}.${process.pid}`, line);
      renameSync(`${file}.${process.pid}`, file);
    }
  }
  const build = parseBuildLine(line);
  builds.set(name, build);
  return build;
}

/**
 * The reference pods should use for a local image: `cronscale.local/NAME:<12 hex>`, unless
 * `CRONSCALE_IMAGE_<NAME>` names another one.
 */
export function imageRef(name: ImageName): string {
  return process.env[imageOverrideVar(name)] || imageBuild(name).ref;
}

/** True when the containerd at `containerdAddress` (namespace k8s.io) has the image `ref`. */
function inContainerd(ref: string, containerdAddress: string): boolean {
  try {
    const out = execFileSync(
      process.env.CTR || "ctr",
      ["-a", containerdAddress, "-n", "k8s.io", "images", "ls", "-q", `name==${ref}`],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
    );
    return out.split("\n").includes(ref);
  } catch {
    return false; // load.sh says what is wrong (no ctr, no socket)
  }
}

/**
 * Builds and imports the images into the containerd at `containerdAddress` (the real node's,
 * `clusterEnv().CONTAINERD_ADDRESS`), namespace k8s.io; returns their references in order. Only
 * images the node lacks go through hack/images/load.sh (build and import); the others cost one
 * `ctr images ls`.
 */
export function loadImages(names: readonly ImageName[], containerdAddress: string): string[] {
  const missing = names.filter((n) => !inContainerd(imageBuild(n).ref, containerdAddress));
  if (missing.length > 0) {
    execFileSync("bash", [`${repoRoot}hack/images/load.sh`, ...missing], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, CONTAINERD_ADDRESS: containerdAddress },
    });
  }
  return names.map((n) => imageBuild(n).ref);
}
