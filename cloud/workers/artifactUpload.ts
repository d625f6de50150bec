/**
 * One attempt at sending one artifact file to the cloud (PUT, the whole body), and the cloud's
 * answer turned into an error the retry policy (uploadRetry.ts) can judge.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stallTimeout, workerStallMs } from "./stallTimeout.js";
import { isTransientStatus, UploadRefused } from "./uploadRetry.js";

export interface ArtifactToUpload {
  file: string;
  name: string;
  kind: "checkpoint" | "adapter" | "file";
  step: number;
}

/** The upload URL carries the claim (fencing number); the file's own fields go beside it. */
export async function uploadArtifactOnce(uploadUrl: string, token: string, artifact: ArtifactToUpload): Promise<void> {
  const url = new URL(uploadUrl);
  url.searchParams.set("name", artifact.name);
  url.searchParams.set("kind", artifact.kind);
  url.searchParams.set("step", String(artifact.step));
  const stall = stallTimeout(workerStallMs(), `uploading ${artifact.name}`);
  try {
    const res = await fetch(url, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
      body: createReadStream(artifact.file).pipe(stall.through()) as unknown as BodyInit,
      duplex: "half",
      signal: stall.signal,
    } as RequestInit);
    if (res.ok) {
      await res.body?.cancel();
      return;
    }
    const { message, code } = await cloudRefusal(res);
    const text = `uploading ${artifact.name} failed: ${message}`;
    if (isTransientStatus(res.status)) throw new Error(text);
    throw new UploadRefused(text, res.status, code);
  } catch (err) {
    const cause = (stall.signal.aborted ? stall.signal.reason : err) as Error;
    // A dropped connection says only "fetch failed": name the file, as the cloud's refusals do.
    throw cause instanceof UploadRefused || cause.message.startsWith("uploading ") ? cause : new Error(`uploading ${artifact.name} failed: ${cause.message}`);
  } finally {
    stall.done();
  }
}

/** The file's sha256 (hex): recorded before the upload, so what the cloud serves can be checked against it. */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The cloud's own sentence and code from its error envelope (e.g. that its disk is full), else the status and body. */
export async function cloudRefusal(res: Response): Promise<{ message: string; code: string | undefined }> {
  const text = await res.text();
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown; code?: unknown } }).error;
    if (typeof error?.message === "string") return { message: `${error.message} (HTTP ${res.status})`, code: typeof error.code === "string" ? error.code : undefined };
  } catch {
    // not the cloud's envelope: fall through to the raw body
  }
  return { message: `HTTP ${res.status} ${text}`, code: undefined };
}
