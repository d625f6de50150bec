/**
 * One attempt at sending one artifact file to the cloud (PUT, the whole body), and the cloud's
 * answer turned into an error the retry policy (transferRetry.ts) can judge.
 */
import { createReadStream } from "node:fs";
import { stallTimeout, workerStallMs } from "./stallTimeout.js";
import { isTransientStatus, TransferRefused } from "./transferRetry.js";

export interface ArtifactToUpload {
  file: string;
  name: string;
  kind: "checkpoint" | "adapter" | "file";
  step: number;
}

/**
 * The upload URL carries the claim (fencing number); the file's own fields go beside it. The upload
 * names its content (sha256), so the cloud keeps the bytes of an attempt that dropped and this one
 * continues from where they end; the cloud checks the whole file against the sha256 before it
 * stores it.
 */
export async function uploadArtifactOnce(uploadUrl: string, token: string, artifact: ArtifactToUpload & { sha256: string }): Promise<void> {
  const offset = await receivedBytes(uploadUrl, token, artifact);
  const url = new URL(uploadUrl);
  url.searchParams.set("name", artifact.name);
  url.searchParams.set("kind", artifact.kind);
  url.searchParams.set("step", String(artifact.step));
  url.searchParams.set("sha256", artifact.sha256);
  url.searchParams.set("offset", String(offset));
  const stall = stallTimeout(workerStallMs(), `uploading ${artifact.name}`);
  try {
    const res = await fetch(url, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
      body: createReadStream(artifact.file, { start: offset }).pipe(stall.through()) as unknown as BodyInit,
      duplex: "half",
      signal: stall.signal,
    } as RequestInit);
    if (res.ok) {
      await res.body?.cancel();
      return;
    }
    throw await failure(res, `uploading ${artifact.name} failed`);
  } catch (err) {
    const cause = (stall.signal.aborted ? stall.signal.reason : err) as Error;
    // A dropped connection says only "fetch failed": name the file, as the cloud's refusals do.
    throw cause instanceof TransferRefused || cause.message.startsWith("uploading ") ? cause : new Error(`uploading ${artifact.name} failed: ${cause.message}`);
  } finally {
    stall.done();
  }
}

/** How many bytes of this file the cloud already holds from earlier attempts. */
async function receivedBytes(uploadUrl: string, token: string, artifact: ArtifactToUpload & { sha256: string }): Promise<number> {
  const url = new URL(uploadUrl);
  url.pathname = `${url.pathname}/${encodeURIComponent(artifact.name)}/received`;
  url.searchParams.set("sha256", artifact.sha256);
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(workerStallMs()) });
    if (!res.ok) throw await failure(res, `uploading ${artifact.name} failed`);
    return ((await res.json()) as { receivedBytes: number }).receivedBytes;
  } catch (err) {
    throw err instanceof TransferRefused || (err as Error).message.startsWith("uploading ")
      ? err
      : new Error(`uploading ${artifact.name} failed: ${(err as Error).message}`);
  }
}

/**
 * The cloud's answer as an error: final (TransferRefused) or worth another try. A resumed upload the
 * cloud could not continue (the offset moved, the bytes did not add up) is tried again: the next
 * attempt asks where to start, and a checksum mismatch has already dropped the bad bytes.
 */
async function failure(res: Response, what: string): Promise<Error> {
  const { message, code } = await cloudRefusal(res);
  const text = `${what}: ${message}`;
  if (isTransientStatus(res.status) || code === "upload_offset_mismatch" || code === "checksum_mismatch") return new Error(text);
  return new TransferRefused(text, res.status, code);
}

/** The cloud's own sentence and code from its error envelope (e.g. that its disk is full), else the status and body. */
export async function cloudRefusal(res: Response): Promise<{ message: string; code: string | undefined }> {
  const text = await res.text();
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown; code?: unknown } }).error;
    if (typeof error?.message === "string")
      return { message: `${error.message} (HTTP ${res.status})`, code: typeof error.code === "string" ? error.code : undefined };
  } catch {
    // not the cloud's envelope: fall through to the raw body
  }
  return { message: `HTTP ${res.status} ${text}`, code: undefined };
}
