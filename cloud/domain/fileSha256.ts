/** The sha256 of a file, hex, read as a stream (a base model may be larger than memory). */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

export async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
