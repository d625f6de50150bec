/**
 * A job's artifacts that the cloud has not acknowledged yet, written as a small manifest in the
 * job's work dir once training produced the final adapter. While the manifest is there the work
 * dir is the only copy of the adapter, so it is kept; a worker that restarts finds it and
 * finishes the upload before it takes new work. Written by rename, so a kill mid-write leaves the
 * previous manifest or none, never half of one.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import type { ArtifactToUpload } from "./artifactUpload.js";

export const MANIFEST_NAME = "pending-upload.json";

export interface PendingArtifact extends ArtifactToUpload {
  sha256: string;
  bytes: number;
  /** The cloud answered this file's upload with success. */
  acknowledged: boolean;
}

export interface PendingUpload {
  jobId: string;
  claim: number;
  /** The cloud's artifact upload URL for this claim (the claim is in its query). */
  uploadUrl: string;
  /** The worker process that wrote it: a live one is still delivering it itself. */
  pid: number;
  /** The worker's name: a worker started again under it takes the manifest whatever the pid says. */
  worker: string;
  artifacts: PendingArtifact[];
  /** The `training.completed` event's data, sent once every artifact is acknowledged. */
  completed: Record<string, unknown>;
}

export async function writePendingUpload(dir: string, manifest: PendingUpload): Promise<void> {
  const file = path.join(dir, MANIFEST_NAME);
  await fs.writeFile(`${file}.tmp`, JSON.stringify(manifest, null, 2));
  await fs.rename(`${file}.tmp`, file);
}

/** The manifests under `workDir` left by this worker's earlier runs or by workers no longer running, with their job dirs. */
export async function findPendingUploads(workDir: string, workerName: string): Promise<{ dir: string; manifest: PendingUpload }[]> {
  let entries: string[];
  try {
    entries = await fs.readdir(workDir);
  } catch {
    return [];
  }
  const found: { dir: string; manifest: PendingUpload }[] = [];
  for (const entry of entries.filter((name) => name.startsWith("svc-job-")).sort()) {
    const dir = path.join(workDir, entry);
    let manifest: PendingUpload;
    try {
      manifest = JSON.parse(await fs.readFile(path.join(dir, MANIFEST_NAME), "utf8")) as PendingUpload;
    } catch {
      continue; // no manifest: a job that never produced its adapter (or one still writing it)
    }
    // Another worker sharing this work dir (a cloud's local workers) delivers its own; a pid may be
    // reused after a restart (containers), so this worker's own name always wins.
    if (manifest.worker !== workerName && isAlive(manifest.pid)) continue;
    found.push({ dir, manifest });
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
