/**
 * The worker link protocol (WebSocket `/v1/workers/connect`, JSON text frames).
 * Workers number the events of each job themselves (seq 1, 2, ...) and keep every event until the
 * cloud acknowledges its seq; after a dropped link they resend what is unacknowledged, and the
 * cloud stores each seq exactly once. That gives at-least-once delivery on the wire and
 * exactly-once in the store. The worker's numbers are its own: the cloud stores each event under
 * the job's next seq, shared with the events the cloud writes itself (cancel, orphan failure).
 * Every assignment carries a fencing number (`claim`); events of an older claim are refused.
 */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { JobEvent, type Job } from "../../sdk/api/jobs.js";
import { WorkerDevice, WorkerLlamaDevice } from "../../sdk/api/workers.js";
import type { HfFiles } from "./hfManifest.js";

const Id = T.String({ minLength: 1, maxLength: 200 });
/**
 * Every frame a worker may send. Fields a newer worker adds are let through (a rolling upgrade
 * must not cut its links); what the hub reads is checked, since a wrong type there threw inside
 * the socket's listener, which took the whole cloud down.
 */
export const WorkerMessage = T.Union([
  /**
   * First frame: who the worker is and which jobs it still holds (after a reconnect); then, for the worker list, its
   * machine, backends, devices and ranks (optional: a worker from before them still links).
   */
  T.Object({
    type: T.Literal("hello"),
    workerId: Id,
    name: T.String({ maxLength: 200 }),
    holding: T.Array(Id, { maxItems: 1000 }),
    host: T.Optional(T.String({ maxLength: 255 })),
    backends: T.Optional(T.Array(T.String({ minLength: 1, maxLength: 40 }), { maxItems: 10 })),
    devices: T.Optional(T.Array(WorkerDevice, { maxItems: 64 })),
    worldSize: T.Optional(T.Integer({ minimum: 1, maximum: 100_000 })),
  }),
  /** The worker is idle and takes the next queued job. */
  T.Object({ type: T.Literal("ready") }),
  /** One job event; `seq` is the job's next event number as the worker counts it. */
  T.Object({
    type: T.Literal("event"),
    jobId: Id,
    claim: T.Integer({ minimum: 0 }),
    seq: T.Integer({ minimum: 1 }),
    eventType: JobEvent.properties.type,
    data: T.Record(T.String(), T.Unknown()),
  }),
  /**
   * What the worker's llama.cpp runs on, once its runtime loaded (seconds after hello, which does not wait for it).
   * Sent only to a hub whose welcome names it, like every frame after this one.
   */
  T.Object({ type: T.Literal("llama"), device: WorkerLlamaDevice }),
  /**
   * Which of the jobs the worker holds are trained and having their adapters delivered (all of them, each time), and
   * (`released`) jobs its hello held that it no longer holds: adapters left by an earlier run of it, delivered and
   * completed over HTTP, which this link's events never end.
   */
  T.Object({
    type: T.Literal("state"),
    uploading: T.Array(Id, { maxItems: 1000 }),
    released: T.Optional(T.Array(Id, { maxItems: 1000 })),
  }),
]);
export type WorkerMessage = Static<typeof WorkerMessage>;

const checkFrame = TypeCompiler.Compile(WorkerMessage);
/** One checker per frame type: its errors name the field, where the union's only say "no branch matched". */
const checkByType = {
  hello: TypeCompiler.Compile(WorkerMessage.anyOf[0]),
  ready: TypeCompiler.Compile(WorkerMessage.anyOf[1]),
  event: TypeCompiler.Compile(WorkerMessage.anyOf[2]),
  llama: TypeCompiler.Compile(WorkerMessage.anyOf[3]),
  state: TypeCompiler.Compile(WorkerMessage.anyOf[4]),
};

/**
 * The frames a hub takes beyond hello, ready and event, named in its welcome: a worker sends them only to a hub
 * that named them, since an older hub closes a link on a frame type it does not know.
 */
export const OPTIONAL_FRAMES = ["llama", "state"] as const;

/**
 * A frame's text as a WorkerMessage, or the reason it is not one, short enough for a WebSocket
 * close reason (at most 123 bytes): the first field that is wrong, by its path.
 */
export function parseWorkerFrame(text: string): { message: WorkerMessage } | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { error: "frames must be JSON" };
  }
  if (checkFrame.Check(value)) return { message: value };
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { error: "a frame must be a JSON object" };
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string" || !Object.hasOwn(checkByType, type)) return { error: closeReason(`unknown frame type ${JSON.stringify(type) ?? "(none)"}`) };
  const first = checkByType[type as keyof typeof checkByType].Errors(value).First();
  const field = first?.path.replace(/^\//, "").replace(/\//g, ".") || "frame";
  // TypeBox says "Expected union value" for a literal that is none of the allowed ones.
  const problem = !first ? "is invalid" : first.message === "Expected union value" ? "is not one of the allowed values" : first.message;
  return { error: closeReason(`${type} frame: ${field} ${problem}`) };
}

/** WebSocket close reasons are at most 123 bytes of UTF-8. */
export function closeReason(text: string): string {
  let reason = text;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}

export type CloudMessage =
  /** The answer to hello: the optional frames (OPTIONAL_FRAMES) this hub takes. Older workers ignore it. */
  | { type: "welcome"; frames: string[] }
  /** A job to run; datasets are fetched over HTTP with the worker token. */
  | {
      type: "assign";
      job: Job;
      /** Fencing number of this claim: sent with every event and upload of the job. */
      claim: number;
      datasetUrl: string | null;
      evalDatasetUrl: string | null;
      artifactUploadUrl: string;
      /**
       * The base model: `path` on the cloud's machine (read in place by the cloud's own workers),
       * `url` to download it, and the sha256 of its content, by which other workers cache it (null
       * when the cloud has no file for it). `hfFolder`: the Hugging Face folder the GGUF was
       * converted from, on the cloud's machine (the cloud's own workers read it in place).
       * `hfFiles`: that folder's files as other torch workers fetch them, by size and sha256 (null
       * when the folder is gone; absent from an older cloud). The worker checks it (parseHfFiles).
       */
      model: { name: string; path: string | null; sha256: string | null; url: string; hfFolder?: string | null; hfFiles?: HfFiles | null };
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
