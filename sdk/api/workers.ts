/** The training workers linked to the cloud: who they are, what they can train on, and what they are doing. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { route } from "./route.js";

/**
 * One kind of compute device of a worker's machine, as the worker found it when it connected: `cpu` (its cores as
 * `count`, the machine's memory), `cuda` (GPUs of one model, each with `memoryBytes`) or `mps` (Apple's GPU, sharing
 * the machine's memory). `memoryBytes` is null where the worker could not read it.
 */
export const WorkerDevice = T.Object({
  kind: T.Union([T.Literal("cpu"), T.Literal("cuda"), T.Literal("mps")]),
  name: T.String({ maxLength: 200 }),
  memoryBytes: T.Union([T.Number({ minimum: 0 }), T.Null()]),
  count: T.Integer({ minimum: 1, maximum: 4096 }),
});
export type WorkerDevice = Static<typeof WorkerDevice>;

/**
 * What a worker's llama.cpp (checkpoint samples, GGUF adapter work) runs on, as the worker found it when its runtime
 * loaded: `cpu` or the GPU build that loaded (`cuda`, `vulkan`, `metal`), the GPUs' names, their memory then, and why
 * the CPU serves although a GPU was allowed (`SVC_LLAMA_GPU`).
 */
export const WorkerLlamaDevice = T.Object({
  type: T.String({ minLength: 1, maxLength: 40 }),
  names: T.Array(T.String({ maxLength: 200 }), { maxItems: 64 }),
  vramTotalBytes: T.Number({ minimum: 0 }),
  vramFreeBytes: T.Number({ minimum: 0 }),
  fallbackReason: T.Optional(T.String({ maxLength: 1000 })),
});
export type WorkerLlamaDevice = Static<typeof WorkerLlamaDevice>;

/**
 * What a worker is doing: `starting` (linked, not yet taking work: it loads, or delivers what an earlier run of it
 * left), `idle` (waiting for a job), `training` (running `jobIds`), `uploading` (`jobIds` are trained and the worker
 * delivers their adapters to the cloud), `gone` (its link closed, or the instance it was linked to stopped beating;
 * kept in the list for an hour). A worker too old to say it uploads is `training` until its job completes.
 */
export const WorkerState = T.Union([T.Literal("starting"), T.Literal("idle"), T.Literal("training"), T.Literal("uploading"), T.Literal("gone")]);
export type WorkerState = Static<typeof WorkerState>;

export const WorkerInfo = T.Object({
  id: T.String(),
  /** The name it was started with (`svc worker --name`). */
  name: T.String(),
  /** Its machine's host name; empty from a worker too old to say. */
  host: T.String(),
  /** The compute backends it can train with (`torch`, `tfjs`). */
  backends: T.Array(T.String()),
  devices: T.Array(WorkerDevice),
  /** Processes one of its jobs trains on (`--procs` / `--gpus` / `--nodes`); 1 for one process. */
  worldSize: T.Integer({ minimum: 1 }),
  /** What its llama.cpp runs on; null until its runtime loaded (seconds after it links), or from a worker too old to say. */
  llamaDevice: T.Union([WorkerLlamaDevice, T.Null()]),
  state: WorkerState,
  jobIds: T.Array(T.String()),
  connectedAt: T.String(),
  /** When the instance holding its link last said the link was open (every few seconds). */
  lastSeenAt: T.String(),
  disconnectedAt: T.Union([T.String(), T.Null()]),
});
export type WorkerInfo = Static<typeof WorkerInfo>;

export const workersApi = {
  /** Every worker linked to any instance of the cloud, connected ones first, then those gone within the hour. */
  listWorkers: route({ method: "GET", path: "/v1/workers", response: T.Array(WorkerInfo) }),
};

/** What a training worker fetches with the worker token to train a job's base model. */
export const workerFilesApi = {
  /** The base model's GGUF file. */
  downloadBaseModel: route({ method: "GET", path: "/v1/worker/models/:name", produces: "file" }),
  /** One file of the base model's Hugging Face folder, by a name the assignment's `hfFiles` lists (no folders, no `..`). */
  downloadHfModelFile: route({ method: "GET", path: "/v1/worker/models/:name/hf/:file", produces: "file" }),
};
