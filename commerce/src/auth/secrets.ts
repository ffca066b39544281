import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

// API keys and OAuth client secrets are random (about 238 bits), not chosen by people, so a plain
// SHA-256 is the right stored form: it cannot be reversed or guessed, and it allows a lookup by
// hash on every request (a slow password hash such as argon2 is for low-entropy passwords).

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A random string of `length` base-62 characters (rejection sampling: no modulo bias). */
export function randomToken(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Constant-time comparison of two secrets (through their digests: equal lengths). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(createHash("sha256").update(a).digest(), createHash("sha256").update(b).digest());
}
