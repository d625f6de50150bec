/**
 * Reference decoding in tfjs: the ground truth llama.cpp output is compared against in tests.
 * It recomputes the full forward pass for every new token (no KV cache): slow, but obviously
 * the same function that was trained.
 */
import { tf, initTf } from '../backend.js';
import type { LoraAdapter } from '../lora.js';
import type { ModelConfig } from '../model/config.js';
import { forwardLastLogits } from '../model/forward.js';
import type { ModelWeights } from '../model/weights.js';
import { END_ID } from '../tokenizer.js';

export interface TfjsGreedyOptions {
  maxTokens: number;
  /** Token ids that end generation (not included in the output). Defaults to <|end|>. */
  stopTokens?: number[];
  lora?: LoraAdapter;
}

/** Greedy (argmax) continuation of `prompt`; returns only the new token ids. */
export async function generateGreedyTfjs(config: ModelConfig, weights: ModelWeights, prompt: readonly number[], options: TfjsGreedyOptions): Promise<number[]> {
  await initTf();
  const stops = new Set(options.stopTokens ?? [END_ID]);
  const tokens = [...prompt];
  const generated: number[] = [];
  while (generated.length < options.maxTokens && tokens.length < config.contextLength) {
    const next = tf.tidy(() => {
      const ids = tf.tensor2d([tokens], [1, tokens.length], 'int32');
      return forwardLastLogits(config, weights, ids, options.lora).argMax(-1);
    });
    const id = (await next.data())[0];
    next.dispose();
    if (stops.has(id)) break;
    tokens.push(id);
    generated.push(id);
  }
  return generated;
}
