/**
 * `~/.svc/credentials.json` (mode 0600, written atomically): either an anonymous token or OAuth
 * tokens, plus the cloud URL they belong to.
 */
import { promises as fs } from "node:fs";
import { credentialsPath } from "./paths.js";
import { readJsonFile, writeFileAtomic } from "./files.js";

export type Credentials =
  | { kind: "anonymous"; cloudUrl: string; token: string }
  | { kind: "oauth"; cloudUrl: string; accessToken: string; refreshToken: string; expiresAt: string };

export type OAuthCredentials = Extract<Credentials, { kind: "oauth" }>;

export async function readCredentials(file = credentialsPath()): Promise<Credentials | null> {
  const value = await readJsonFile<Credentials>(file);
  if (!value) return null;
  if (value.kind !== "anonymous" && value.kind !== "oauth") throw new Error(`${file} has an unknown kind; run \`svc logout\` and sign in again`);
  return value;
}

export async function writeCredentials(credentials: Credentials, file = credentialsPath()): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(credentials, null, 2) + "\n");
}

export async function deleteCredentials(file = credentialsPath()): Promise<boolean> {
  try {
    await fs.unlink(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}
