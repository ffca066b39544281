// Console output as stored in a TaskExecution: secret values masked, size capped with the cut
// marked. Pure; the log reading itself is in logs.ts.

/** What replaces a secret value in output. */
export const MASK = "****";

/**
 * Values shorter than this are not masked: replacing every "1" or "ab" would make output
 * unreadable and hide nothing (README: use values of at least 4 characters for secrets).
 */
export const MIN_MASKED_LENGTH = 4;

/** Replaces every occurrence of every secret value (longest first, so overlaps mask fully). */
export function maskSecrets(text: string, secrets: Iterable<string>): string {
  const values = [...new Set(secrets)]
    .filter((s) => s.length >= MIN_MASKED_LENGTH)
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const v of values) out = out.split(v).join(MASK);
  return out;
}

/** The marker put where output was cut. */
export function truncationMarker(keptHead: number, keptTail: number): string {
  return `\n[… output truncated by cronscale: kept the first ${keptHead} and the last ${keptTail} characters …]\n`;
}

/** Captured output: the text to store and whether it was cut. */
export interface CapturedOutput {
  text: string;
  truncated: boolean;
}

/**
 * Assembles the stored output from the start of the log (`head`, possibly longer than the cap) and,
 * when the log was longer than the cap, its end (`tail`). Masking happens before cutting, so a
 * secret is never split into a visible prefix by the cut (the mask itself may be cut).
 */
export function assembleOutput(
  head: string,
  tail: string | undefined,
  maxChars: number,
  secrets: Iterable<string>,
): CapturedOutput {
  const secretList = [...secrets];
  const h = maskSecrets(head, secretList);
  if (tail === undefined && h.length <= maxChars) return { text: h, truncated: false };
  const half = Math.floor(maxChars / 2);
  const t = maskSecrets(tail ?? head, secretList);
  const headPart = h.slice(0, half);
  const tailPart = t.length > half ? t.slice(t.length - half) : t;
  return { text: headPart + truncationMarker(headPart.length, tailPart.length) + tailPart, truncated: true };
}
