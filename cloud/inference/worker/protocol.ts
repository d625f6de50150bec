/** Messages between the cloud and its inference child process (Node IPC, JSON-serialised). */
import type { LlamaDevice, LlamaModelPlacement } from "../../../engine/infer/llamaDevice.js";
import type { ChatParams, FinishReason, TokenLogprob, Usage } from "../types.js";

export type ToWorker = { type: "generate"; id: number; modelPath: string; adapterPath: string | null; params: ChatParams } | { type: "cancel"; id: number };

export type FromWorker =
  | { type: "ready" }
  /** What llama.cpp decodes on, sent when it loads and again whenever a model is loaded or evicted. */
  | { type: "device"; device: LlamaDevice; models: LlamaModelPlacement[] }
  /** Several messages in one write (worker/outbox.ts), in order. */
  | { type: "batch"; messages: FromWorker[] }
  | { type: "text"; id: number; text: string; logprobs?: TokenLogprob[] }
  | { type: "done"; id: number; finishReason: FinishReason; usage: Usage }
  | { type: "error"; id: number; status: number; code: string; message: string; param?: string };
