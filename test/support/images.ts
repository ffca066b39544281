import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

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
 * Builds the image (or finds it in the cache) and returns its reference and archive; the answer
 * is remembered for the life of the process. A build can take minutes the first time: call it
 * from a setup hook, not from a test body with a short timeout.
 */
export function imageBuild(name: ImageName): ImageBuild {
  const known = builds.get(name);
  if (known) return known;
  const out = execFileSync("bash", [`${repoRoot}hack/images/build.sh`, name], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20,
  });
  const build = parseBuildLine(out);
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

/**
 * Builds and imports the images into the containerd at `containerdAddress` (the real node's,
 * `clusterEnv().CONTAINERD_ADDRESS`), namespace k8s.io; returns their references in order.
 */
export function loadImages(names: readonly ImageName[], containerdAddress: string): string[] {
  const out = execFileSync("bash", [`${repoRoot}hack/images/load.sh`, ...names], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, CONTAINERD_ADDRESS: containerdAddress },
  });
  return out.trim().split("\n");
}
