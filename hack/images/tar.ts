import { gunzipSync } from "node:zlib";

/** One entry of a tar archive, as far as image checks need it. */
export interface TarEntry {
  name: string;
  type: "file" | "dir" | "symlink" | "hardlink" | "other";
  mode: number;
  uid: number;
  gid: number;
  linkname: string;
  data: Buffer;
}

const TYPES: Record<string, TarEntry["type"]> = {
  "0": "file",
  "": "file",
  "5": "dir",
  "2": "symlink",
  "1": "hardlink",
};

function field(block: Buffer, start: number, len: number): string {
  const raw = block.subarray(start, start + len);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? len : end).toString("utf8");
}

function octal(block: Buffer, start: number, len: number): number {
  const s = field(block, start, len).trim();
  return s === "" ? 0 : Number.parseInt(s, 8);
}

/** Parses PAX extended header records ("LEN key=value\n"). */
function paxRecords(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    const len = Number.parseInt(data.subarray(i, space).toString("ascii"), 10);
    if (!(len > 0)) break;
    const rec = data.subarray(space + 1, i + len - 1).toString("utf8");
    const eq = rec.indexOf("=");
    out[rec.slice(0, eq)] = rec.slice(eq + 1);
    i += len;
  }
  return out;
}

/**
 * Reads a (optionally gzip-compressed) tar archive held in memory: ustar entries with PAX
 * extended headers, which is what Go's archive/tar and GNU tar write for image layers.
 */
export function readTar(archive: Buffer): TarEntry[] {
  const buf = archive[0] === 0x1f && archive[1] === 0x8b ? gunzipSync(archive) : archive;
  const entries: TarEntry[] = [];
  let pax: Record<string, string> = {};
  let off = 0;
  while (off + 512 <= buf.length) {
    const block = buf.subarray(off, off + 512);
    if (block.every((b) => b === 0)) break;
    const size = octal(block, 124, 12);
    const typeflag = field(block, 156, 1);
    const data = buf.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (typeflag === "x") {
      pax = paxRecords(data);
      continue;
    }
    if (typeflag === "g") continue;
    const prefix = field(block, 345, 155);
    const name = pax.path ?? (prefix ? `${prefix}/${field(block, 0, 100)}` : field(block, 0, 100));
    entries.push({
      name,
      type: TYPES[typeflag] ?? "other",
      mode: octal(block, 100, 8),
      uid: pax.uid ? Number(pax.uid) : octal(block, 108, 8),
      gid: pax.gid ? Number(pax.gid) : octal(block, 116, 8),
      linkname: pax.linkpath ?? field(block, 157, 100),
      data,
    });
    pax = {};
  }
  return entries;
}
