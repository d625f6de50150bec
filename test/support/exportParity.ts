/**
 * Does a merged export answer like base + adapter? Greedy answers through svc's own serving path
 * (engine/infer/llama-cpp.ts, what the endpoint runs) for the eval prompts, and the perplexity of
 * the eval set's answers (the tokens that carry loss) from llama.cpp's probabilities. Shared by the
 * export test and its bench entry.
 */
import type { ChatExample } from "../../engine/data/chat-jsonl.js";
import { loadModelChatTokenizer } from "../../engine/data/model-chat-tokenizer.js";
import { loadLlamaCppModel } from "../../engine/infer/llama-cpp.js";
import { sequenceLogProbabilities } from "./llamaCppReference.js";

export interface ExportParity {
  prompts: number;
  /** Prompts where the merged model's greedy answer is base + adapter's, character for character. */
  sameAnswers: number;
  /** Prompts where base + adapter answers differently from the base alone (the adapter did something). */
  changedByAdapter: number;
  perplexity: { base: number; adapter: number; merged: number };
  /** |merged - adapter| / adapter. */
  perplexityRelativeDifference: number;
  firstDifference?: { prompt: string; adapter: string; merged: string };
}

const promptOf = (example: ChatExample) =>
  example.messages.slice(
    0,
    example.messages.findLastIndex((m) => m.role === "assistant"),
  );

async function greedyAnswers(modelPath: string, examples: readonly ChatExample[], maxTokens: number, adapter?: string): Promise<string[]> {
  const model = await loadLlamaCppModel({ modelPath });
  const session = await model.createSession(adapter ? { adapters: [{ path: adapter }] } : {});
  try {
    const answers: string[] = [];
    for (const example of examples) answers.push((await session.generate({ messages: promptOf(example), maxTokens, temperature: 0 })).text);
    return answers;
  } finally {
    await session.dispose();
    await model.dispose();
  }
}

/** exp(mean negative log-likelihood) of the answer tokens (mask 1) of every example. */
async function perplexity(modelPath: string, tokenizerPath: string, examples: readonly ChatExample[], lora?: string): Promise<number> {
  const tokenizer = await loadModelChatTokenizer(tokenizerPath);
  try {
    let nll = 0;
    let count = 0;
    for (const example of examples) {
      const { ids, lossMask } = tokenizer.renderChat(example.messages);
      const logProbs = await sequenceLogProbabilities(modelPath, ids, { lora });
      for (let i = 1; i < ids.length; i++) {
        if (!lossMask[i]) continue;
        nll -= logProbs[i - 1];
        count++;
      }
    }
    return Math.exp(nll / count);
  } finally {
    await tokenizer.dispose();
  }
}

export async function compareExport(options: {
  base: string;
  adapter: string;
  merged: string;
  examples: readonly ChatExample[];
  maxTokens?: number;
}): Promise<ExportParity> {
  const { base, adapter, merged, examples } = options;
  const maxTokens = options.maxTokens ?? 48;
  const baseAnswers = await greedyAnswers(base, examples, maxTokens);
  const adapterAnswers = await greedyAnswers(base, examples, maxTokens, adapter);
  const mergedAnswers = await greedyAnswers(merged, examples, maxTokens);
  const differing = adapterAnswers.findIndex((answer, i) => answer !== mergedAnswers[i]);
  const ppl = {
    base: await perplexity(base, base, examples),
    adapter: await perplexity(base, base, examples, adapter),
    merged: await perplexity(merged, base, examples),
  };
  return {
    prompts: examples.length,
    sameAnswers: adapterAnswers.filter((answer, i) => answer === mergedAnswers[i]).length,
    changedByAdapter: adapterAnswers.filter((answer, i) => answer !== baseAnswers[i]).length,
    perplexity: ppl,
    perplexityRelativeDifference: Math.abs(ppl.merged - ppl.adapter) / ppl.adapter,
    firstDifference:
      differing < 0
        ? undefined
        : { prompt: JSON.stringify(promptOf(examples[differing]).at(-1)?.content), adapter: adapterAnswers[differing], merged: mergedAnswers[differing] },
  };
}
