/**
 * The answers a model gives to a few eval prompts at a checkpoint: greedy, bounded, through
 * llama.cpp on the base GGUF with the checkpoint's GGUF adapter (no adapter: the base model, the
 * run's checkpoint 0). The adapter file is the one every backend writes, so the same code
 * judges tfjs and torch runs, and the answers are the ones the served endpoint would give.
 * The base loads once per run; each checkpoint gets a small context of its own. Its prompts are
 * answered one after another: as parallel sequences of one context (decoded in shared batches)
 * the answers now and then took tokens of each other's, and no longer equal the served ones.
 */
import type { ChatMessage } from './chat-template.js';
import { loadLlamaCppModel, type LlamaCppModel } from './llama-cpp.js';

export interface SamplePrompt {
  /** The conversation up to (not including) the reference answer. */
  messages: ChatMessage[];
}

export interface SampleAnswerer {
  /** Each prompt's greedy answer with `adapterPath` applied (or the base's), at most `maxTokens` tokens. */
  answer(prompts: readonly SamplePrompt[], options: { adapterPath?: string; maxTokens: number }): Promise<string[]>;
  dispose(): Promise<void>;
}

/**
 * Loads the base GGUF for sampling. One llama.cpp thread by default, as serving uses
 * (SVC_INFERENCE_THREADS): more than one per context collapses on a busy CPU, where threads then
 * wait on each other, and a training machine's CPU is busy.
 */
export async function openSampleAnswerer(basePath: string, options: { threads?: number } = {}): Promise<SampleAnswerer> {
  const model: LlamaCppModel = await loadLlamaCppModel({ modelPath: basePath, threads: options.threads ?? 1 });
  return {
    async answer(prompts, { adapterPath, maxTokens }) {
      const longest = Math.max(1, ...prompts.map((p) => model.chatPromptTokens(p.messages).length));
      // A context just big enough for the longest prompt and its answer: creating one costs its size.
      const contextSize = Math.min(model.trainContextSize, longest + maxTokens + 8);
      const session = await model.createSession({ contextSize, ...(adapterPath ? { adapters: [{ path: adapterPath }] } : {}) });
      try {
        const answers: string[] = [];
        for (const prompt of prompts) {
          const room = contextSize - model.chatPromptTokens(prompt.messages).length;
          answers.push(room > 0 ? (await session.generate({ messages: prompt.messages, maxTokens: Math.min(maxTokens, room), temperature: 0 })).text : '');
        }
        return answers;
      } finally {
        await session.dispose();
      }
    },
    dispose: () => model.dispose(),
  };
}
