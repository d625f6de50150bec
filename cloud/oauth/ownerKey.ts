/**
 * The cloud owner's approval key (see sdk/ownerApproval.ts): generated once in the data dir, mode
 * 0600, so that reading it proves the reader is the OS user who runs this cloud.
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { writeFileAtomic } from "../../sdk/files.js";
import { ownerKeyPath, readOwnerKey } from "../../sdk/ownerApproval.js";

export async function loadOrCreateOwnerKey(dataDir: string): Promise<string> {
  const file = ownerKeyPath(dataDir);
  const existing = await readOwnerKey(dataDir);
  if (existing) {
    // A key others can read proves nothing: repair a mode loosened by hand or by a backup tool.
    await fs.chmod(file, 0o600);
    return existing;
  }
  const key = randomBytes(32).toString("base64url");
  await writeFileAtomic(file, key + "\n", 0o600);
  return key;
}
