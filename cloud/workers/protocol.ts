/**
 * The worker link protocol (WebSocket `/v1/workers/connect`, JSON text frames).
 * Workers number the events of each job themselves (seq 1, 2, ...) and keep every event until the
 * cloud acknowledges its seq; after a dropped link they resend what is unacknowledged, and the
 * cloud stores each seq exactly once. That gives at-least-once delivery on the wire and
 * exactly-once in the store. The worker's numbers are its own: the cloud stores each event under
 * the job's next seq, shared with the events the cloud writes itself (cancel, orphan failure).
 * Every assignment carries a fencing number (`claim`); events of an older claim are refused.
 */
import type { Job, JobEventType } from "../../sdk/wire.js";

export type WorkerMessage =
  /** First frame: who the worker is and which jobs it still holds (after a reconnect). */
  | { type: "hello"; workerId: string; name: string; holding: string[] }
  /** The worker is idle and takes the next queued job. */
  | { type: "ready" }
  /** One job event; `seq` is the job's next event number as the worker counts it. */
  | { type: "event"; jobId: string; claim: number; seq: number; eventType: JobEventType; data: Record<string, unknown> };

export type CloudMessage =
  /** A job to run; datasets are fetched over HTTP with the worker token. */
  | {
      type: "assign";
      job: Job;
      /** Fencing number of this claim: sent with every event and upload of the job. */
      claim: number;
      datasetUrl: string | null;
      evalDatasetUrl: string | null;
      artifactUploadUrl: string;
      /** The base model: `path` on the cloud's machine (used when it exists locally), else `url`. */
      model: { name: string; path: string | null; url: string };
    }
  /** Stop the job as soon as possible and report `training.cancelled`. */
  | { type: "cancel"; jobId: string }
  /** The event with this seq (and all before it) is stored. */
  | { type: "ack"; jobId: string; seq: number }
  /**
   * The event was refused for good: `job_ended` (the job ended, e.g. cancelled, so the worker
   * should stop it), `stale_claim` (the job was claimed again), `sequence_gap`, `invalid_transition`.
   * A store failure is not nacked: the cloud drops the link and the worker resends after reconnecting.
   */
  | { type: "nack"; jobId: string; seq: number; code: string; error: string };
