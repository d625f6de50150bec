/**
 * The proof that approves a device sign-in. The cloud keeps a random key in its data dir (mode
 * 0600), so only the OS user who runs the cloud (and root) can read it; `svc login` run by that
 * user signs the user code with it. The key never crosses the wire: a proof approves one code and
 * nothing else, and a proof made with another cloud's key is refused.
 */
import { createHmac } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";

export const ownerKeyPath = (dataDir: string): string => path.join(dataDir, "owner-approval.key");

/** The provider's own normalisation: case and separators do not matter when typing a code. */
export function normalizeUserCode(userCode: string): string {
  return userCode.toUpperCase().replace(/\W/g, "");
}

export function ownerApprovalProof(key: string, userCode: string): string {
  return createHmac("sha256", key)
    .update(`svc-device-approval:${normalizeUserCode(userCode)}`)
    .digest("base64url");
}

/** The key of the cloud using `dataDir`, or null when this user has none there (or may not read it). */
export async function readOwnerKey(dataDir: string): Promise<string | null> {
  try {
    const key = (await readFile(ownerKeyPath(dataDir), "utf8")).trim();
    return key || null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EACCES" || code === "EPERM" || code === "ENOTDIR") return null;
    throw err;
  }
}
