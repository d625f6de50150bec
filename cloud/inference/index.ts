/**
 * Inference for the edge and the Playground: llama.cpp (node-llama-cpp) in a worker process,
 * never in the request loop; or an OpenAI-compatible upstream server.
 *
 * `chat()` admits a request (fair queue, 429 beyond its bound) and returns the stream of its
 * text; the HTTP layers (cloud/edge, cloud/routes/inference.ts) turn that into OpenAI JSON/SSE.
 */
import os from "node:os";
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { UpstreamAdapter } from "../../sdk/api/deployments.js";
import type { InferenceDeviceReport } from "../../sdk/api/inference.js";
import type { CloudContext } from "../context.js";
import type { CancelSignal } from "./clientGone.js";
import { BackendCache } from "./backendCache.js";
import { followDeploymentAdapters } from "./deployedAdapters.js";
import { FairQueue } from "./fairQueue.js";
import { resolveBackend } from "./targets.js";
import { localToolPlan } from "./tools.js";
import { type Backend, type ChatCall, type ChatEvent, type ChatStream, InferenceError, type UpstreamLora, type Usage } from "./types.js";
import { DEFAULT_UPSTREAM_TIMEOUTS, upstreamChat, type UpstreamTimeouts } from "./upstream.js";
import { UpstreamPool } from "./upstreamPool.js";
import { VllmAdapters } from "./vllmAdapters.js";
import { DEFAULT_INFERENCE_START_TIMEOUT_MS, InferenceWorkerProcess } from "./workerProcess.js";

export { InferenceError } from "./types.js";
export type { Backend, ChatCall, ChatEvent, ChatParams, ChatStream } from "./types.js";

export interface ChatOptions {
  stream: boolean;
  /** Fairness key (deployment or project): waiting requests are served round-robin by key. */
  queueKey: string;
  /** The client went away (an AbortSignal, or the cheaper ClientGone of clientGone.ts). */
  signal?: CancelSignal;
  /** Hears the final usage of a generation its client abandoned (local backends report it). */
  onAbandonedUsage?: (usage: Usage) => void;
}

export interface InferenceService {
  /** The backend serving a target; throws a 503 InferenceError when it cannot be served. */
  resolve(target: DeploymentTarget): Promise<Backend>;
  /** Admits and starts a chat. Rejects with a 429 InferenceError when the queue is full. */
  chat(backend: Backend, params: ChatCall, options: ChatOptions): Promise<ChatStream>;
  /**
   * A deployment changed what it serves (before and after; null: nothing, as when deleted or
   * disabled): adapters on a vLLM upstream are loaded and unloaded to match. Never throws.
   */
  deploymentChanged(before: DeploymentTarget | null, after: DeploymentTarget | null): Promise<void>;
  /** An upstream adapter's name, folder and last load as this instance saw it, for the endpoint page. */
  upstreamAdapter(backend: Extract<Backend, { kind: "upstream" }>): UpstreamAdapter | undefined;
  /** What the llama.cpp child decodes on; null until it has loaded llama.cpp (or while it restarts). */
  readonly device: InferenceDeviceReport | null;
  /** Process id of the llama.cpp child (for diagnostics and crash tests). */
  readonly workerPid: number | undefined;
  close(): Promise<void>;
}

export interface InferenceSettings {
  /**
   * Generations decoding at once in the child, each on a context of its own (so also the pool
   * size per model and adapter). Default twice the cores: with 1 llama.cpp thread per context,
   * two contexts per core keep a core busy while the other's stream is in JavaScript.
   */
  concurrency: number;
  /** Requests allowed to wait beyond those running; more get 429. */
  maxWaiting: number;
  threads: number;
  /** Bound on loaded base-model weights (bytes of GGUF) in the child. */
  maxModelBytes: number;
  /** Bound on llama.cpp contexts over all (model, adapter) pairs in the child; at least `concurrency`. */
  maxContexts: number;
  upstreamTimeouts: UpstreamTimeouts;
  /** Longest a resolved target → backend is trusted without a base-model change notification. */
  backendTtlMs: number;
  /** How long the llama.cpp child may take to start before it is killed and restarted. */
  startTimeoutMs: number;
}

/** Defaults, overridable through the environment of `svc cloud serve` (SVC_INFERENCE_*). */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): InferenceSettings {
  const num = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  const concurrency = Math.floor(num("SVC_INFERENCE_CONCURRENCY", defaultConcurrency()));
  return {
    concurrency,
    maxWaiting: num("SVC_INFERENCE_MAX_QUEUE", 16),
    threads: num("SVC_INFERENCE_THREADS", 1),
    maxModelBytes: num("SVC_INFERENCE_CACHE_MB", 1024) * 1024 * 1024,
    maxContexts: Math.max(num("SVC_INFERENCE_CONTEXTS", 8), concurrency),
    upstreamTimeouts: {
      headersMs: num("SVC_UPSTREAM_TIMEOUT_MS", DEFAULT_UPSTREAM_TIMEOUTS.headersMs),
      idleMs: num("SVC_UPSTREAM_IDLE_TIMEOUT_MS", DEFAULT_UPSTREAM_TIMEOUTS.idleMs),
    },
    // The edge's bound for its deployment state (cloud/edge/index.ts), the same setting.
    backendTtlMs: num("SVC_EDGE_STATE_TTL_MS", 900),
    startTimeoutMs: num("SVC_INFERENCE_START_TIMEOUT_MS", DEFAULT_INFERENCE_START_TIMEOUT_MS),
  };
}

/** Two contexts per core, within 2-8: more only time-slices the cores and costs KV-cache memory. */
export function defaultConcurrency(cores = os.availableParallelism()): number {
  return Math.min(8, Math.max(2, 2 * cores));
}

export async function startInferenceService(ctx: CloudContext, settings: InferenceSettings = settingsFromEnv()): Promise<InferenceService> {
  const worker = new InferenceWorkerProcess(
    { threads: settings.threads, maxModelBytes: settings.maxModelBytes, maxContexts: settings.maxContexts, contextsPerModel: settings.concurrency },
    (line) => process.stderr.write(`svc cloud: ${line}\n`),
    settings.startTimeoutMs,
  );
  const queue = new FairQueue(settings.concurrency, settings.maxWaiting);
  const upstreams = new UpstreamPool();
  const backends = new BackendCache((target) => resolveBackend(ctx, target), ctx.deploymentChanges, settings.backendTtlMs);
  const adapters = new VllmAdapters(settings.upstreamTimeouts.headersMs, (line) => process.stderr.write(`svc cloud: ${line}\n`));
  // Warm the child in the background; a failure here is reported again by the first request.
  worker.start().catch(() => undefined);

  async function localChat(backend: Extract<Backend, { kind: "local" }>, call: ChatCall, options: ChatOptions): Promise<ChatStream> {
    // Tool messages and tool choices become plain chat + a grammar (cloud/inference/tools.ts).
    const { params, decode } = localToolPlan(call);
    const release = await queue.acquire(options.queueKey, options.signal);
    const channel = worker.generate(backend.modelPath, backend.adapterPath, params, options.signal, options.onAbandonedUsage);
    return decode(releasing(channel, release));
  }

  function proxiedChat(backend: Extract<Backend, { kind: "upstream" }>, call: ChatCall, options: ChatOptions): ChatStream {
    const ask = () =>
      upstreamChat(upstreams, backend.baseUrl, backend.model, call, { stream: options.stream, signal: options.signal, timeouts: settings.upstreamTimeouts });
    return backend.lora ? upstreamLoraChat(adapters, backend.baseUrl, backend.lora, ask) : ask();
  }

  return {
    resolve: (target) => backends.get(target),
    chat: async (backend, params, options) => (backend.kind === "local" ? localChat(backend, params, options) : proxiedChat(backend, params, options)),
    deploymentChanged: (before, after) => followDeploymentAdapters(ctx, adapters, (target) => backends.get(target), before, after).catch(() => undefined),
    upstreamAdapter: (backend) => (backend.lora ? adapters.state(backend.baseUrl, backend.lora) : undefined),
    get device() {
      return worker.device;
    },
    get workerPid() {
      return worker.pid;
    },
    close: () => {
      backends.close();
      upstreams.close();
      return worker.close();
    },
  };
}

/**
 * A chat with an adapter vLLM loads at run time: loaded first if this instance has not seen it
 * loaded, and loaded again once when vLLM answers 404 before any output (a restarted vLLM has
 * forgotten every run-time adapter), then asked again.
 */
async function* upstreamLoraChat(adapters: VllmAdapters, baseUrl: string, lora: UpstreamLora, ask: () => ChatStream): AsyncGenerator<ChatEvent> {
  await adapters.ensureLoaded(baseUrl, lora);
  let answered = false;
  try {
    for await (const event of ask()) {
      answered = true;
      yield event;
    }
  } catch (err) {
    if (answered || !(err instanceof InferenceError && err.extra.upstreamStatus === 404)) throw err;
    await adapters.reload(baseUrl, lora);
    yield* ask();
  }
}

/** Frees the queue slot when the stream ends, fails, or its consumer stops early. */
async function* releasing(stream: ChatStream, release: () => void): AsyncGenerator<ChatEvent> {
  try {
    yield* stream;
  } finally {
    release();
  }
}
