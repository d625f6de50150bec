/**
 * llama.cpp as the reference implementation for tests: tokenization, next-token log-probabilities
 * and greedy decoding of any GGUF, through node-llama-cpp (CPU, never compiling, 1 thread so
 * results do not depend on the machine's core count).
 *
 *   tokenize(path, text, {special})      → llama.cpp's token ids (no BOS added; `special` parses
 *                                          "<|im_start|>"-style text as special tokens)
 *   logProbabilities(path, tokenIds)     → Float32Array[vocab]: log softmax of llama.cpp's logits at
 *                                          the last position (see below)
 *   greedy(path, tokenIds, n, {lora})    → the next n token ids, argmax at each step
 *   compareWithReference(logits, ref)    → max |log-prob difference| (finite, not far tail) + argmax agreement
 *   disposeLlamaCppReference()           → frees every model and context (call in `after`)
 *
 * Logits: node-llama-cpp 3.x does not hand out raw logits; it returns the full-vocabulary
 * probabilities of the sampler's candidates. With temperature 0 the sampler chain is the greedy
 * sampler alone, which leaves the candidates untouched, so the probabilities are
 * softmax(logits) over the whole vocabulary, computed in float32 by its addon
 * (llama/addon/AddonContext.cpp). Logits are known up to a constant only, hence log-probabilities:
 * compare them, or compare logits after subtracting logsumexp. Tokens whose probability
 * underflows float32 (log p below about -103) come back as -Infinity; compare only finite entries.
 *
 * Models and contexts are cached per path (and adapter), so a test file loads each once.
 */
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";

type NodeLlamaCpp = typeof import("node-llama-cpp");

let runtime: Promise<{ lib: NodeLlamaCpp; llama: Llama }> | undefined;
const models = new Map<string, Promise<LlamaModel>>();
const contexts = new Map<string, Promise<{ context: LlamaContext; sequence: LlamaContextSequence }>>();
/** One evaluation at a time per context: requests clear and refill the same sequence. */
const queues = new Map<string, Promise<unknown>>();

function getRuntime(): Promise<{ lib: NodeLlamaCpp; llama: Llama }> {
  runtime ??= (async () => {
    const lib = await import("node-llama-cpp");
    const llama = await lib.getLlama({ gpu: false, build: "never", logLevel: lib.LlamaLogLevel.error });
    return { lib, llama };
  })();
  return runtime;
}

/** The loaded model for a GGUF path (loaded once). Rejects if llama.cpp cannot load the file. */
export function referenceModel(path: string): Promise<LlamaModel> {
  let model = models.get(path);
  if (!model) {
    model = getRuntime().then(({ llama }) => llama.loadModel({ modelPath: path, gpuLayers: 0 }));
    models.set(path, model);
    model.catch(() => models.delete(path));
  }
  return model;
}

export interface ReferenceOptions {
  /** A GGUF LoRA adapter applied at scale 1. */
  lora?: string;
}

function getContext(path: string, options: ReferenceOptions) {
  const key = `${path}\0${options.lora ?? ""}`;
  let entry = contexts.get(key);
  if (!entry) {
    entry = (async () => {
      const model = await referenceModel(path);
      const context = await model.createContext({
        contextSize: model.trainContextSize,
        threads: 1,
        sequences: 1,
        // F32 KV cache: llama.cpp's default F16 cache alone moves log-probabilities by ~0.02,
        // which would hide real differences in the engine comparisons.
        experimentalKvCacheKeyType: "F32",
        experimentalKvCacheValueType: "F32",
        lora: options.lora ? { adapters: [{ filePath: options.lora, scale: 1 }] } : undefined,
      });
      return { context, sequence: context.getSequence() };
    })();
    contexts.set(key, entry);
    entry.catch(() => contexts.delete(key));
  }
  return { key, entry };
}

/** Runs `fn` on a fresh (cleared) sequence of the path's context, after earlier requests on it. */
async function withSequence<T>(path: string, options: ReferenceOptions, fn: (sequence: LlamaContextSequence) => Promise<T>): Promise<T> {
  const { key, entry } = getContext(path, options);
  const run = (queues.get(key) ?? Promise.resolve()).then(async () => {
    const { sequence } = await entry;
    await sequence.clearHistory();
    return fn(sequence);
  });
  queues.set(
    key,
    run.catch(() => undefined),
  );
  return run;
}

/** llama.cpp's tokenization of `text` (common_tokenize with add_special=false), as test-tokenizer-0 does. */
export async function tokenize(path: string, text: string, options: { special?: boolean } = {}): Promise<number[]> {
  const model = await referenceModel(path);
  return model.tokenize(text, options.special ?? false).map(Number);
}

/** The vocabulary size llama.cpp sees for the model. */
export async function vocabularySize(path: string): Promise<number> {
  const model = await referenceModel(path);
  return model.fileInfo.metadata.tokenizer.ggml.tokens.length;
}

function greedyNext(token: Token, probabilities: boolean) {
  return [token, { generateNext: { token: true, probabilities, options: { temperature: 0 } } }] as const;
}

/**
 * log softmax of llama.cpp's logits for the token after `tokenIds` (see the header: -Infinity
 * where float32 underflowed). Indexed by token id.
 */
export async function logProbabilities(path: string, tokenIds: readonly number[], options: ReferenceOptions = {}): Promise<Float32Array> {
  if (tokenIds.length === 0) throw new Error("logProbabilities needs at least one token");
  const model = await referenceModel(path);
  const size = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
  return withSequence(path, options, async (sequence) => {
    const input = [...tokenIds.slice(0, -1).map((t) => t as Token), greedyNext(tokenIds.at(-1) as Token, true)];
    const output = await sequence.controlledEvaluate(input as Parameters<LlamaContextSequence["controlledEvaluate"]>[0]);
    const probabilities = output[tokenIds.length - 1]?.next.probabilities;
    if (!probabilities) throw new Error("llama.cpp returned no probabilities");
    const out = new Float32Array(size).fill(-Infinity);
    for (const [token, p] of probabilities) out[token] = Math.log(p);
    return out;
  });
}

/**
 * The log-probability llama.cpp gives each of `tokenIds[1..]` after the tokens before it, in one
 * pass over the sequence (entry i is for tokenIds[i + 1]).
 */
export async function sequenceLogProbabilities(path: string, tokenIds: readonly number[], options: ReferenceOptions = {}): Promise<number[]> {
  if (tokenIds.length < 2) throw new Error("sequenceLogProbabilities needs at least two tokens");
  return withSequence(path, options, async (sequence) => {
    const input = tokenIds.slice(0, -1).map((t) => greedyNext(t as Token, true));
    const output = await sequence.controlledEvaluate(input as unknown as Parameters<LlamaContextSequence["controlledEvaluate"]>[0]);
    return tokenIds.slice(1).map((next, i) => {
      const p = output[i]?.next.probabilities?.get(next as Token);
      return p === undefined || p <= 0 ? -Infinity : Math.log(p);
    });
  });
}

/** Greedy continuation: the argmax token at each of `n` steps after `tokenIds` (EOG tokens included, no stopping). */
export async function greedy(path: string, tokenIds: readonly number[], n: number, options: ReferenceOptions = {}): Promise<number[]> {
  if (tokenIds.length === 0) throw new Error("greedy needs at least one prompt token");
  return withSequence(path, options, async (sequence) => {
    const out: number[] = [];
    let input: Parameters<LlamaContextSequence["controlledEvaluate"]>[0] = [
      ...tokenIds.slice(0, -1).map((t) => t as Token),
      greedyNext(tokenIds.at(-1) as Token, false) as never,
    ];
    while (out.length < n) {
      const output = await sequence.controlledEvaluate(input);
      const next = output[input.length - 1]?.next.token;
      if (next == null) throw new Error("llama.cpp produced no token");
      out.push(next);
      input = [greedyNext(next, false) as never];
    }
    return out;
  });
}

/** Frees every context and model this module loaded. */
export async function disposeLlamaCppReference(): Promise<void> {
  const allContexts = [...contexts.values()];
  const allModels = [...models.values()];
  contexts.clear();
  models.clear();
  queues.clear();
  for (const entry of allContexts)
    await entry.then(
      ({ context }) => context.dispose(),
      () => undefined,
    );
  for (const entry of allModels)
    await entry.then(
      (model) => model.dispose(),
      () => undefined,
    );
}

/** log softmax of raw logits (float64 accumulation), to compare an engine's logits with logProbabilities(). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const logZ = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - logZ;
  return out;
}

/**
 * Largest |a - b| over tokens where llama.cpp's log-probability is finite and at least
 * `minLogProb` (default -30: the tail is where float32 softmax rounding dominates), plus where
 * it happened and whether both argmaxes agree. `engineLogits` are raw logits; `reference` comes
 * from logProbabilities().
 */
export function compareWithReference(
  engineLogits: ArrayLike<number>,
  reference: Float32Array,
  minLogProb = -30,
): { maxDiff: number; at: number; sameArgmax: boolean } {
  if (engineLogits.length !== reference.length) throw new Error(`vocabulary sizes differ: ${engineLogits.length} vs ${reference.length}`);
  const engine = logSoftmax(engineLogits);
  let maxDiff = 0,
    at = -1,
    engineBest = 0,
    referenceBest = 0;
  for (let i = 0; i < reference.length; i++) {
    if (engine[i] > engine[engineBest]) engineBest = i;
    if (reference[i] > reference[referenceBest]) referenceBest = i;
    if (!(reference[i] >= minLogProb)) continue;
    const diff = Math.abs(engine[i] - reference[i]);
    if (diff > maxDiff) {
      maxDiff = diff;
      at = i;
    }
  }
  return { maxDiff, at, sameArgmax: engineBest === referenceBest };
}

/** Alias with the name the engine comparisons use: llama.cpp's next-token log-probabilities. */
export const logits = logProbabilities;
