/**
 * Text generation with llama.cpp through node-llama-cpp: a base GGUF, optional LoRA adapters,
 * greedy or sampled decoding, stop strings, streaming, and token usage.
 *
 * Shape: `loadLlamaCppModel()` loads the weights once; `model.createSession({adapters})` makes a
 * context (adapters attach per context in llama.cpp) that serves one request at a time. The
 * caller (the inference worker) decides how many sessions to keep; this module caches nothing.
 *
 * The runtime comes from llamaRuntime.ts. Each session gets an explicit thread count: node-llama-cpp's
 * default (4 threads) oversubscribes a small machine, where threads then wait on each other.
 */
import type { Llama, LlamaContext, LlamaContextSequence, LlamaModel, Token } from 'node-llama-cpp';
import { promptTokens, type ChatMessage } from './chat-template.js';
import { byteChatTokenizer, isSvcVocabulary, type ChatTokenizer } from '../data/chat-tokenizer.js';
import { ggufChatTokenizer } from '../data/gguf-chat-tokenizer.js';
import { StopStringMatcher } from './stop-strings.js';
import { grammarState, repeatPenalty, tokenBias, tokenLogprob, type SamplingParams, type TokenLogprob } from './generation-controls.js';
import { randomInt } from 'node:crypto';
import { llamaGpuLayers, type LlamaModelPlacement } from './llamaDevice.js';
import { basename } from 'node:path';
import { currentLlamaDevice, getLlamaRuntime, type LlamaRuntime, type NodeLlamaCpp } from './llamaRuntime.js';

export { currentLlamaDevice, getLlamaRuntime, type LlamaRuntime };

export interface LoadLlamaCppOptions {
  modelPath: string;
  /** CPU threads for evaluation; 1 is fastest for svc-tiny. Default 1. */
  threads?: number;
}

export interface LoraAdapterRef {
  path: string;
  /** Multiplies the adapter's alpha / r. Default 1. */
  scale?: number;
}

export interface SessionOptions {
  adapters?: LoraAdapterRef[];
  /** Context window in tokens; default: the model's trained context length. */
  contextSize?: number;
}

export interface GenerateRequest extends SamplingParams {
  /** Chat to continue with an assistant turn. Exactly one of messages / promptTokens. */
  messages?: ChatMessage[];
  /** Raw prompt token ids (bypasses the chat template). */
  promptTokens?: number[];
  /**
   * Called with each piece of text as soon as it is final (never part of a stop string), with the
   * log probabilities of the tokens decoded since the last call when they were asked for.
   */
  onTextChunk?: (text: string, logprobs?: TokenLogprob[]) => void;
  signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'length' | 'abort';

export interface GenerateResult {
  text: string;
  /** Generated token ids, without the end-of-generation token. */
  tokens: number[];
  finishReason: FinishReason;
  /** Per generated token, when `topLogprobs` was given. */
  logprobs?: TokenLogprob[];
  usage: { promptTokens: number; completionTokens: number; totalTokens: number };
}

/** Thrown when the prompt alone does not fit the context window (an HTTP 400 for the server). */
export class ContextLengthExceededError extends Error {
  readonly code = 'context_length_exceeded';
  constructor(
    readonly promptTokens: number,
    readonly contextSize: number,
  ) {
    super(`prompt has ${promptTokens} tokens but the context window is ${contextSize}`);
  }
}

export async function loadLlamaCppModel(options: LoadLlamaCppOptions): Promise<LlamaCppModel> {
  const { lib, llama } = await getLlamaRuntime();
  // "auto" offloads as many layers as llama.cpp's estimate says fit the device's free memory.
  const model = await llama.loadModel({ modelPath: options.modelPath, gpuLayers: llamaGpuLayers(llama.gpu) });
  return new LlamaCppModel(lib, llama, model, options.threads ?? 1);
}

export class LlamaCppModel {
  /** True when the GGUF carries the svc byte vocabulary, so our own renderer gives its tokens. */
  readonly usesSvcTemplate: boolean;
  /**
   * How chats become prompt tokens: svc's byte renderer for svc models, otherwise the GGUF's own
   * template and tokenizer, the very ChatTokenizer training uses (engine/data/gguf-chat-tokenizer.ts).
   */
  readonly chatTokenizer: ChatTokenizer;

  constructor(
    readonly lib: NodeLlamaCpp,
    readonly llama: Llama,
    readonly model: LlamaModel,
    private readonly threads: number,
  ) {
    const tokens = model.fileInfo.metadata.tokenizer?.ggml?.tokens;
    this.usesSvcTemplate = isSvcVocabulary(tokens);
    this.chatTokenizer = this.usesSvcTemplate ? byteChatTokenizer : ggufChatTokenizer(model);
  }

  /** How many of its layers llama.cpp put on the device. */
  get placement(): LlamaModelPlacement {
    return { file: basename(this.model.filename ?? ''), gpuLayers: this.model.gpuLayers, layers: this.model.fileInsights.totalLayers };
  }

  get trainContextSize(): number {
    return this.model.trainContextSize;
  }

  /**
   * llama.cpp's estimate of the RAM one more context of this model takes (KV cache and compute
   * buffers, weights excluded): what sizes a pool of contexts against the machine's memory.
   */
  contextBytes(contextSize = this.model.trainContextSize): number {
    return this.model.fileInsights.estimateContextResourceRequirements({ contextSize, modelGpuLayers: this.model.gpuLayers, sequences: 1 }).cpuRam;
  }

  async createSession(options: SessionOptions = {}): Promise<LlamaCppSession> {
    const contextSize = options.contextSize ?? this.model.trainContextSize;
    const context = await this.model.createContext({
      contextSize,
      threads: this.threads,
      sequences: 1,
      lora: options.adapters?.length ? { adapters: options.adapters.map((a) => ({ filePath: a.path, scale: a.scale ?? 1 })) } : undefined,
    });
    // llama.cpp may round the context up; positions past the trained length are never used.
    return new LlamaCppSession(this, context, Math.min(contextSize, context.contextSize));
  }

  /**
   * Prompt token ids for a chat: exactly `chatTokenizer.renderGenerationPrompt`, so serving
   * prompts a fine-tuned model with the tokens it was trained on.
   */
  chatPromptTokens(messages: readonly ChatMessage[]): Token[] {
    return this.usesSvcTemplate ? (promptTokens(messages) as Token[]) : (this.chatTokenizer.renderGenerationPrompt(messages) as Token[]);
  }

  /**
   * Renders a chat through node-llama-cpp's own chat wrappers (Jinja included). Serving no longer
   * uses it; kept as an independent reference: for svc models it must give exactly `promptTokens`,
   * which a test checks.
   */
  templatePromptTokens(messages: readonly ChatMessage[]): Token[] {
    const wrapper = this.lib.resolveChatWrapper(this.model);
    const chatHistory = [
      ...messages.map((m) => (m.role === 'assistant' ? { type: 'model' as const, response: [m.content] } : { type: m.role, text: m.content })),
      { type: 'model' as const, response: [] },
    ];
    const { contextText } = wrapper.generateContextState({ chatHistory });
    return contextText.tokenize(this.model.tokenizer);
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}

export class LlamaCppSession {
  private readonly sequence: LlamaContextSequence;
  /** Requests on one sequence must not interleave; this chains them. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly owner: LlamaCppModel,
    private readonly context: LlamaContext,
    readonly contextSize: number,
  ) {
    this.sequence = context.getSequence();
  }

  generate(request: GenerateRequest): Promise<GenerateResult> {
    const run = this.queue.then(() => this.generateNow(request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async generateNow(request: GenerateRequest): Promise<GenerateResult> {
    const model = this.owner.model;
    const prompt = request.promptTokens ? (request.promptTokens as Token[]) : this.owner.chatPromptTokens(request.messages ?? []);
    if (prompt.length === 0) throw new Error('empty prompt');
    if (prompt.length >= this.contextSize) throw new ContextLengthExceededError(prompt.length, this.contextSize);
    const maxTokens = Math.min(request.maxTokens ?? 128, this.contextSize - prompt.length);

    await this.sequence.clearHistory();
    // A fallback template's end-of-turn marker may be plain text, not a token: stop on it too.
    const templateStops = request.promptTokens ? [] : this.owner.chatTokenizer.stopStrings;
    const matcher = new StopStringMatcher([...(request.stop ?? []), ...templateStops]);
    const tokens: Token[] = [];
    const pieces: string[] = [];
    const logprobs: TokenLogprob[] | undefined = request.topLogprobs === undefined ? undefined : [];
    let unreported = 0; // logprobs entries not yet handed to onTextChunk
    let undecoded: Token[] = [];
    let finishReason: FinishReason = 'length';
    // JSON grammars let the model pad the end with newlines; whitespace is held back until more
    // text follows, so a constrained answer never ends with it.
    let heldWhitespace = '';
    const emit = (chunk: string) => {
      let text = chunk;
      if (request.output) {
        text = heldWhitespace + text;
        heldWhitespace = /\s*$/.exec(text)![0];
        text = text.slice(0, text.length - heldWhitespace.length);
      }
      if (!text) return;
      pieces.push(text);
      const fresh = logprobs?.slice(unreported);
      unreported = logprobs?.length ?? 0;
      request.onTextChunk?.(text, fresh);
    };
    const temperature = request.temperature ?? 0;
    const { lib, llama } = this.owner;
    const grammarEvaluationState = await grammarState(lib, llama, model, request.output);
    const iterator = this.sequence.evaluateWithMetadata(
      prompt,
      { probabilities: logprobs !== undefined },
      {
        temperature,
        topP: temperature > 0 ? request.topP : undefined,
        // Unseeded sampling differs call to call ("regenerate" must give new text), as OpenAI's does.
        seed: request.seed ?? randomInt(2 ** 31),
        repeatPenalty: repeatPenalty(tokens, request.presencePenalty, request.frequencyPenalty),
        tokenBias: tokenBias(lib, model, request.logitBias),
        grammarEvaluationState,
      },
    );
    if (maxTokens > 0) {
      for await (const output of iterator) {
        if (request.signal?.aborted) {
          finishReason = 'abort';
          break;
        }
        const token = output.token;
        tokens.push(token);
        const probabilities = (output as { probabilities?: Map<Token, number> }).probabilities;
        if (logprobs && probabilities) logprobs.push(tokenLogprob(model, token, probabilities, request.topLogprobs ?? 0));
        // A multi-byte character can span tokens; wait until the pending tokens decode cleanly.
        undecoded.push(token);
        const text = model.detokenize(undecoded, false, tokens.slice(-undecoded.length - 4, -undecoded.length));
        if (!text.endsWith('\uFFFD') || undecoded.length >= 4) {
          undecoded = [];
          const { emit: ready, stopped } = matcher.push(text);
          emit(ready);
          if (stopped) {
            finishReason = 'stop';
            break;
          }
        }
        if (tokens.length >= maxTokens) break;
      }
    }
    await iterator.return();
    const hitStopString = finishReason === 'stop';
    // The iterator also ends by itself when the model emits its end-of-generation token.
    if (finishReason === 'length' && tokens.length < maxTokens) finishReason = 'stop';
    if (!hitStopString) {
      const tail = matcher.push(model.detokenize(undecoded));
      emit(tail.emit);
      if (!tail.stopped) emit(matcher.flush());
    }
    return {
      text: pieces.join(''),
      tokens,
      finishReason,
      logprobs,
      usage: { promptTokens: prompt.length, completionTokens: tokens.length, totalTokens: prompt.length + tokens.length },
    };
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
  }
}

/** Streams a request's text chunks as an async iterator; the final result is the return value. */
export async function* streamGenerate(session: LlamaCppSession, request: Omit<GenerateRequest, 'onTextChunk'>): AsyncGenerator<string, GenerateResult, void> {
  const chunks: string[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  const result = session
    .generate({
      ...request,
      onTextChunk: (text) => {
        chunks.push(text);
        wake?.();
      },
    })
    .finally(() => {
      done = true;
      wake?.();
    });
  result.catch(() => undefined); // surfaced below via await
  while (true) {
    if (chunks.length) {
      yield chunks.shift()!;
      continue;
    }
    if (done) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  return await result;
}
