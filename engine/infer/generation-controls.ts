/**
 * The OpenAI request controls llama.cpp's sampler can honour, turned into node-llama-cpp options:
 * presence/frequency penalties, logit bias, JSON output enforced by a grammar, and log
 * probabilities of the chosen and the most likely tokens.
 *
 * A value the model cannot take (a token id outside its vocabulary, a JSON schema the grammar
 * compiler does not support) is an `InvalidGenerationRequest` naming the request field, which
 * the server answers with a 400.
 */
import type { Llama, LlamaGrammar, LlamaModel, Token } from 'node-llama-cpp';
import { grammarReadySchema, unsupportedSchemaPart } from './json-schema-support.js';

/**
 * `{type: 'json'}`: any JSON object; `json_schema`: an object matching the schema;
 * `text_or_json_schema`: either plain text that does not begin with `marker`'s first character,
 * or `marker` followed by an object matching the schema (how a model without a tool-aware
 * template may choose between answering and calling a tool, cloud/inference/tools.ts).
 */
export type OutputConstraint =
  | { type: 'json' }
  | { type: 'json_schema'; schema: Record<string, unknown> }
  | { type: 'text_or_json_schema'; schema: Record<string, unknown>; marker: string };

/**
 * How a generation samples and ends, in the engine's spelling: what the llama.cpp engine takes
 * (GenerateRequest) and what the cloud hands its inference backends (ChatParams).
 */
export interface SamplingParams {
  /** Default 128; always capped by the space left in the context window. */
  maxTokens?: number;
  /** 0 (default) means greedy decoding. */
  temperature?: number;
  topP?: number;
  stop?: string[];
  /** Sampling seed; the same seed and request give the same text. Random when absent. */
  seed?: number;
  /** OpenAI's penalties (-2 to 2) on tokens already generated: once present / per occurrence. */
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Token id → logit shift (-100 to 100; -100 bans the token). */
  logitBias?: Record<string, number>;
  /** Output forced by a grammar to be JSON (or JSON matching a schema): `response_format`. */
  output?: OutputConstraint;
  /** Report each generated token's log probability with this many alternatives (0-20): `top_logprobs`. */
  topLogprobs?: number;
}

export interface TopLogprob {
  token: string;
  logprob: number;
  /** UTF-8 bytes of the token's text (a token may hold part of a character). */
  bytes: number[];
}

export interface TokenLogprob extends TopLogprob {
  /** The most likely tokens at this position, most likely first (as many as asked for). */
  topLogprobs: TopLogprob[];
}

/** OpenAI's bounds: a bias of ±100 bans or forces a token. */
export const LOGIT_BIAS_LIMIT = 100;
export const MAX_TOP_LOGPROBS = 20;

export class InvalidGenerationRequest extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

type NodeLlamaCpp = typeof import('node-llama-cpp');

/** Penalties apply to the tokens generated so far, as OpenAI and vLLM apply them. */
export function repeatPenalty(generated: Token[], presencePenalty = 0, frequencyPenalty = 0) {
  if (!presencePenalty && !frequencyPenalty) return undefined;
  return { punishTokens: () => generated, penalty: 1, presencePenalty, frequencyPenalty, maxPunishTokens: 4096 };
}

export function tokenBias(lib: NodeLlamaCpp, model: LlamaModel, logitBias: Record<string, number> | undefined) {
  const entries = Object.entries(logitBias ?? {});
  if (entries.length === 0) return undefined;
  const bias = new lib.TokenBias(model.tokenizer);
  const vocabulary = vocabularySize(model);
  for (const [key, value] of entries) {
    const token = Number(key);
    if (!Number.isInteger(token) || token < 0 || token >= vocabulary) {
      throw new InvalidGenerationRequest('logit_bias', `logit_bias: token id ${key} is not in this model's vocabulary (0-${vocabulary - 1})`);
    }
    // -100 must ban the token outright; a finite logit shift could still let it through.
    bias.set(token as Token, value <= -LOGIT_BIAS_LIMIT ? 'never' : { logit: value });
  }
  return bias;
}

function vocabularySize(model: LlamaModel): number {
  return model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}

/** Compiled grammars, per llama runtime and constraint; compiling a schema is not free. */
const grammars = new WeakMap<Llama, Map<string, Promise<LlamaGrammar>>>();
const GRAMMAR_CACHE_SIZE = 64;

export async function grammarState(lib: NodeLlamaCpp, llama: Llama, model: LlamaModel, constraint: OutputConstraint | undefined) {
  if (!constraint) return undefined;
  let cache = grammars.get(llama);
  if (!cache) grammars.set(llama, (cache = new Map()));
  const key = JSON.stringify(constraint);
  let grammar = cache.get(key);
  if (!grammar) {
    grammar = compileGrammar(llama, constraint);
    // A schema that failed to compile is not kept: the next request gets the same 400 afresh.
    grammar.catch(() => cache!.delete(key));
    if (cache.size >= GRAMMAR_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, grammar);
  }
  return new lib.LlamaGrammarEvaluationState({ model, grammar: await grammar });
}

async function compileGrammar(llama: Llama, constraint: OutputConstraint): Promise<LlamaGrammar> {
  if (constraint.type === 'json') return llama.getGrammarFor('json');
  // Tool schemas were checked (and named) when the request was read; this is the last guard.
  const param = constraint.type === 'json_schema' ? 'response_format' : 'tools';
  const problem = unsupportedSchemaPart(constraint.schema);
  if (problem) throw new InvalidGenerationRequest(param, `${param === 'tools' ? 'tools' : 'response_format.json_schema'}.${problem}`);
  let json: LlamaGrammar;
  try {
    json = await llama.createGrammarForJsonSchema(grammarReadySchema(constraint.schema) as never);
  } catch (err) {
    throw new InvalidGenerationRequest(param, `${param}: the schema is not supported: ${(err as Error).message}`);
  }
  if (constraint.type === 'json_schema') return json;
  return llama.createGrammar({ grammar: textOrJsonGrammar(json.grammar, constraint.marker), rootRuleName: TEXT_OR_JSON_ROOT });
}

const TEXT_OR_JSON_ROOT = 'svc-text-or-json';

/**
 * GBNF for "plain text, or the marker then the JSON": the JSON grammar's rules stay as they are
 * (its `root` is referenced by name) and a new root chooses. Text may be anything that does not
 * start with the marker's first character, so the choice is made by the very first token.
 */
export function textOrJsonGrammar(jsonGrammar: string, marker: string): string {
  const literal = JSON.stringify(marker);
  const first = marker.codePointAt(0)!.toString(16).padStart(2, '0');
  return `${TEXT_OR_JSON_ROOT} ::= svc-free-text | ${literal} root\nsvc-free-text ::= [^\\x${first}\\x00] [^\\x00]*\n${jsonGrammar}`;
}

/** One token's log probability and its `top` most likely alternatives, from llama.cpp's distribution. */
export function tokenLogprob(model: LlamaModel, token: Token, probabilities: Map<Token, number>, top: number): TokenLogprob {
  const piece = (t: Token): TopLogprob => {
    const bytes = [...Buffer.from(model.detokenize([t], true))];
    // log(0) is -Infinity, which JSON cannot carry; OpenAI clients expect a number.
    return { token: Buffer.from(bytes).toString('utf8'), bytes, logprob: Math.max(Math.log(probabilities.get(t) ?? 0), -9999) };
  };
  const topLogprobs: TopLogprob[] = [];
  for (const candidate of probabilities.keys()) {
    if (topLogprobs.length >= top) break;
    topLogprobs.push(piece(candidate));
  }
  return { ...piece(token), topLogprobs };
}
