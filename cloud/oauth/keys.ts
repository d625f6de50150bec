/**
 * The provider's secrets: the signing key set (ID tokens) and the keys that sign its browser
 * cookies. Generated once and kept in the data dir (0600), so a restarted cloud keeps verifying
 * what it issued before and open approval pages keep working.
 */
import { generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { readJsonFile, writeFileAtomic } from "../../sdk/files.js";

export interface ProviderKeys {
  /** Private JWKs (RS256, the default ID-token algorithm). */
  jwks: { keys: Record<string, unknown>[] };
  cookieKeys: string[];
}

export const keysFilePath = (dataDir: string): string => path.join(dataDir, "oauth-keys.json");

export async function loadOrCreateKeys(dataDir: string): Promise<ProviderKeys> {
  const file = keysFilePath(dataDir);
  const existing = await readJsonFile<ProviderKeys>(file);
  if (existing) {
    if (!isProviderKeys(existing))
      throw new Error(`${file} is not a valid OAuth key file; delete it to generate new keys (signed-in browsers must approve again)`);
    // The file holds secrets: repair a mode loosened by hand or by a backup tool.
    await fs.chmod(file, 0o600);
    return existing;
  }
  const keys = generateKeys();
  await writeFileAtomic(file, JSON.stringify(keys, null, 2) + "\n", 0o600);
  return keys;
}

function generateKeys(): ProviderKeys {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" };
  return { jwks: { keys: [jwk] }, cookieKeys: [randomBytes(32).toString("base64url")] };
}

function isProviderKeys(value: ProviderKeys): boolean {
  return (
    Array.isArray(value.jwks?.keys) &&
    value.jwks.keys.length > 0 &&
    Array.isArray(value.cookieKeys) &&
    value.cookieKeys.length > 0 &&
    value.cookieKeys.every((key) => typeof key === "string" && key.length >= 32)
  );
}
