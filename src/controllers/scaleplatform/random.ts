import { randomInt } from "node:crypto";
import type { RandomString } from "./desired/credentials.ts";

// The randomness of generated credentials and keys, injected into the plan (tests count on a
// deterministic source instead).

const ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Cryptographically random alphanumeric strings. */
export const cryptoRandom: RandomString = (n) =>
  Array.from({ length: n }, () => ALPHANUM[randomInt(ALPHANUM.length)]).join("");
