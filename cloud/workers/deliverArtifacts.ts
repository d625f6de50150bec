/**
 * Delivers a job's final artifacts, as listed in its pending-upload manifest: each file not yet
 * acknowledged is uploaded with retries; when a round of retries fails the worker says so and
 * tries again later, for as long as it runs (the work dir stays, and a restarted worker resumes
 * from the manifest). Only a refusal by the cloud (the job ended, the claim moved on, the file is
 * refused) ends the delivery without every artifact acknowledged.
 */
import { uploadArtifactOnce } from "./artifactUpload.js";
import { writePendingUpload, type PendingUpload } from "./pendingUploads.js";
import { TransferRefused, transferDelayMs, withTransferRetries } from "./transferRetry.js";

export type Delivery = { kind: "acknowledged" } | { kind: "refused"; error: TransferRefused };

export interface DeliveryOptions {
  /** The manifest's upload URL as this worker reaches it (through its own cloud URL). */
  uploadUrl: string;
  token: string;
  log: (line: string) => void;
  /** Told when a whole round of retries failed and the next round waits (a job event, where the link can carry one). */
  warn?: (message: string) => void;
}

export async function deliverArtifacts(options: DeliveryOptions, dir: string, manifest: PendingUpload): Promise<Delivery> {
  for (const artifact of manifest.artifacts) {
    for (let round = 0; !artifact.acknowledged; round++) {
      try {
        await withTransferRetries(() => uploadArtifactOnce(options.uploadUrl, options.token, artifact), {
          onRetry: (err, delayMs) => options.log(`job ${manifest.jobId}: ${err.message}; retrying in ${delayMs} ms`),
        });
        artifact.acknowledged = true;
        await writePendingUpload(dir, manifest);
        options.log(`job ${manifest.jobId}: ${artifact.name} (sha256 ${artifact.sha256}, ${artifact.bytes} bytes) acknowledged by the cloud`);
      } catch (err) {
        if (err instanceof TransferRefused) return { kind: "refused", error: err };
        // The rounds' waits grow too, so a cloud that stays away is not knocked at every few seconds.
        const laterMs = transferDelayMs(round + 4);
        const message = `${(err as Error).message}; the adapter is kept on this worker and the upload is retried in ${Math.round(laterMs / 1000)} s`;
        options.log(`job ${manifest.jobId}: ${message}`);
        options.warn?.(message);
        await new Promise((resolve) => setTimeout(resolve, laterMs));
      }
    }
  }
  return { kind: "acknowledged" };
}
