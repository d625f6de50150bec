/**
 * Deployment API keys: `svc_live_` + 32 random bytes in base62. Only the SHA-256 and a short
 * display prefix are stored; the plaintext is returned once, at creation.
 */
import { timingSafeEqual } from "node:crypto";
import { randomToken, sha256Hex } from "./ids.js";

export const KEY_PREFIX = "svc_live_";
/** How many leading characters of a key are stored and shown (`svc_live_` plus 3). */
export const DISPLAY_PREFIX_LENGTH = 12;

export interface GeneratedKey {
  plaintext: string;
  hash: string;
  prefix: string;
}

export function generateDeploymentKey(): GeneratedKey {
  const plaintext = randomToken(KEY_PREFIX);
  return { plaintext, hash: sha256Hex(plaintext), prefix: plaintext.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/** Constant-time comparison of two hex digests of equal length. */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
