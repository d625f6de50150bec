/** Identifiers, timestamps and hashes used across the cloud. */
import * as crypto from "node:crypto";
import { createHash, randomBytes, randomUUID } from "node:crypto";

export const newId = (): string => randomUUID();
export const nowIso = (): string => new Date().toISOString();
/**
 * crypto.hash (Node >= 20.12) is the one-shot digest, cheaper than a Hash object on every
 * authenticated edge request. Older Node 20 releases keep the Hash object.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === "function" ? (text) => crypto.hash("sha256", text, "hex") : (text) => createHash("sha256").update(text).digest("hex");

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Encodes bytes in base62 (big-endian), for tokens that survive copy-paste and URLs. */
export function base62(bytes: Uint8Array): string {
  let n = BigInt("0x" + (Buffer.from(bytes).toString("hex") || "0"));
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(Math.ceil((bytes.length * 8) / Math.log2(62)), "0");
}

export const randomToken = (prefix: string, byteCount = 32): string => prefix + base62(randomBytes(byteCount));
