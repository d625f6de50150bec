/**
 * The inference child process: receives generate requests from the cloud over Node IPC, runs
 * them on llama.cpp, and streams text back.
 *
 * The cloud imports this module only dynamically, to learn its file URL; esbuild therefore keeps
 * it in a chunk of its own, which the cloud then runs as the child's main script (from source
 * under tsx alike). It must be the main script, not `node -e`: node-llama-cpp forks helper
 * processes with the parent's execArgv, which would re-run an `-e` program.
 */
import { pathToFileURL } from "node:url";
import { ContextLengthExceededError, currentLlamaDevice, getLlamaRuntime } from "../../../engine/infer/llama-cpp.js";
import { llamaDeviceLogLine, llamaGpuSetting, llamaPreload } from "../../../engine/infer/llamaDevice.js";
import { InvalidGenerationRequest } from "../../../engine/infer/generation-controls.js";
import { isDrainMessage } from "../../../sdk/platform/stop.js";
import { EngineCache } from "./engineCache.js";
import { Outbox } from "./outbox.js";
import type { FromWorker, ToWorker } from "./protocol.js";

/** This module's URL, so the cloud can start a child that imports it (source or bundle alike). */
export const inferenceWorkerModuleUrl = import.meta.url;

export interface InferenceWorkerSettings {
  threads: number;
  maxModelBytes: number;
  maxContexts: number;
  contextsPerModel: number;
}

export async function runInferenceWorker(settings: InferenceWorkerSettings): Promise<void> {
  const reportDevice = async () => {
    const runtime = await getLlamaRuntime();
    send({ type: "device", device: await currentLlamaDevice(runtime), models: cache.loadedModels });
  };
  // The child's stderr is the cloud's log: one line naming the device, with the reason when the CPU serves in a GPU's
  // stead, the first time llama.cpp loads.
  let announced: Promise<void> | undefined;
  const announce = () =>
    (announced ??= getLlamaRuntime().then(
      (runtime) => {
        process.stderr.write(`svc cloud: ${llamaDeviceLogLine(runtime.device, llamaGpuSetting())}\n`);
        return reportDevice();
      },
      (err) => {
        process.stderr.write(`svc cloud: llama.cpp did not load: ${(err as Error)?.message ?? err}\n`);
      },
    ));
  const cache = new EngineCache({
    ...settings,
    onModelsChanged: () =>
      void announce()
        .then(reportDevice)
        .catch(() => undefined),
  });
  const running = new Map<number, AbortController>();
  // Once the cloud is gone (killed, crashed), a send would emit an unhandled 'error' and end this
  // process with a stack trace instead of the quiet shutdown below; there is nobody left to tell.
  const send = (message: FromWorker) => {
    if (process.connected) process.send!(message);
  };
  const outbox = new Outbox((messages) => send(messages.length === 1 ? messages[0] : { type: "batch", messages }));

  const generate = async (message: Extract<ToWorker, { type: "generate" }>) => {
    const abort = new AbortController();
    running.set(message.id, abort);
    let lease: Awaited<ReturnType<EngineCache["session"]>> | null = null;
    try {
      lease = await cache.session(message.modelPath, message.adapterPath);
      const p = message.params;
      const result = await lease.session.generate({
        messages: p.messages,
        maxTokens: p.maxTokens,
        temperature: p.temperature,
        topP: p.topP,
        stop: p.stop,
        seed: p.seed,
        presencePenalty: p.presencePenalty,
        frequencyPenalty: p.frequencyPenalty,
        logitBias: p.logitBias,
        output: p.output,
        topLogprobs: p.topLogprobs,
        signal: abort.signal,
        onTextChunk: (text, logprobs) => outbox.text({ type: "text", id: message.id, text, ...(logprobs ? { logprobs } : {}) }),
      });
      const finishReason = result.finishReason === "length" ? "length" : "stop";
      outbox.last({ type: "done", id: message.id, finishReason, usage: result.usage });
    } catch (err) {
      outbox.last({ type: "error", id: message.id, ...describe(err, message) });
    } finally {
      lease?.release();
      running.delete(message.id);
    }
  };

  const leave = () => {
    for (const abort of running.values()) abort.abort();
    void cache.close().finally(() => process.exit(0));
  };
  process.on("message", (message: ToWorker) => {
    // The cloud's stop request (sdk/platform/stop.ts): the way to ask that works on Windows too.
    if (isDrainMessage(message)) leave();
    else if (message.type === "generate") void generate(message);
    else if (message.type === "cancel") running.get(message.id)?.abort();
  });
  // The cloud went away (even by SIGKILL): nothing left to serve, so stop decoding and leave.
  process.on("disconnect", leave);
  send({ type: "ready" });
  // llama.cpp loads now rather than on the first request, so the log and /readyz name the device from the start
  // and the first chat does not wait for it; SVC_LLAMA_PRELOAD=0 leaves it to the first local request.
  if (llamaPreload()) void announce();
}

function describe(err: unknown, message: Extract<ToWorker, { type: "generate" }>): { status: number; code: string; message: string; param?: string } {
  if (err instanceof ContextLengthExceededError) return { status: 400, code: err.code, message: `messages: ${err.message}`, param: "messages" };
  if (err instanceof InvalidGenerationRequest) return { status: 400, code: "invalid_request", message: err.message, param: err.param };
  const e = err as NodeJS.ErrnoException;
  if (e?.code === "ENOENT")
    return { status: 500, code: "artifact_missing", message: `a file of this target is missing on the server: ${e.path ?? message.modelPath}` };
  return { status: 500, code: "inference_failed", message: `inference failed: ${e?.message ?? String(err)}` };
}

/** Set by the cloud in the child's environment only; with the main-script check it never fires on import. */
export const CHILD_ENV = "SVC_INFERENCE_CHILD_SETTINGS";

const settingsJson = process.env[CHILD_ENV];
if (settingsJson && process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  delete process.env[CHILD_ENV];
  await runInferenceWorker(JSON.parse(settingsJson) as InferenceWorkerSettings);
}
