/**
 * Builds the shipped base model models/svc-tiny.gguf from scratch:
 *   1. generates the CC0 chat corpus deterministically into models/corpus/ (committed),
 *   2. pretrains svc-tiny on it in tfjs (wasm backend, one core),
 *   3. exports GGUF and a small JSON card with the training numbers.
 *
 * Usage: npx tsx scripts/pretrain.ts [--steps N] [--batch N] [--lr X] [--seed N] [--blocks N] [--out PATH]
 * Same arguments, same bytes: initialisation, corpus and batch order all derive from --seed.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { initTf } from "../engine/backend.js";
import { generateCorpus } from "./corpus/generate.js";
import { saveModelGguf } from "../engine/gguf/model-file.js";
import { promptTokens } from "../engine/infer/chat-template.js";
import { generateGreedyTfjs } from "../engine/infer/tfjs-generate.js";
import { SVC_TINY } from "../engine/model/config.js";
import { countParameters } from "../engine/model/weights.js";
import { pretrain } from "../engine/train/pretrain.js";
import { decodeTokens, renderChat, type ChatMessage } from "../engine/tokenizer.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    steps: { type: "string", default: "1500" },
    batch: { type: "string", default: "16" },
    lr: { type: "string", default: "0.003" },
    seed: { type: "string", default: "1" },
    conversations: { type: "string", default: "20000" },
    /** Override the number of transformer blocks (for size experiments; the shipped model uses the default). */
    blocks: { type: "string" },
    out: { type: "string", default: resolve(root, "models/svc-tiny.gguf") },
  },
});

const seed = Number(args.seed);
const config = args.blocks ? { ...SVC_TINY, blockCount: Number(args.blocks) } : SVC_TINY;
const renderLength = (m: ChatMessage[]) => renderChat(m).ids.length;
const trainSet = generateCorpus(Number(args.conversations), seed, config.contextLength, renderLength);
const evalSet = generateCorpus(400, seed + 1000, config.contextLength, renderLength);

const corpusDir = resolve(root, "models/corpus");
await mkdir(corpusDir, { recursive: true });
const toJsonl = (set: ChatMessage[][]) => set.map((messages) => JSON.stringify({ messages })).join("\n") + "\n";
await writeFile(resolve(corpusDir, "svc-tiny-chat.train.jsonl"), toJsonl(trainSet));
await writeFile(resolve(corpusDir, "svc-tiny-chat.eval.jsonl"), toJsonl(evalSet));

await initTf();
const started = performance.now();
const { weights, result } = await pretrain({
  config,
  conversations: trainSet,
  evalConversations: evalSet,
  seed,
  maxSteps: Number(args.steps),
  batchSize: Number(args.batch),
  learningRate: Number(args.lr),
  evalSteps: 200,
  onLog: (log) => {
    if (log.step % 25 === 0 || log.evalLoss !== undefined) {
      const elapsed = ((performance.now() - started) / 1000).toFixed(0);
      const evalText = log.evalLoss !== undefined ? ` eval ${log.evalLoss.toFixed(3)}` : "";
      console.log(
        `step ${log.step} loss ${log.loss.toFixed(3)}${evalText} lr ${log.learningRate.toExponential(2)} ${log.tokensPerSecond.toFixed(0)} tok/s ${elapsed}s`,
      );
    }
  },
});
const wallSeconds = (performance.now() - started) / 1000;
await saveModelGguf(args.out, config, weights);

const samples: Record<string, string> = {};
for (const question of ["What is the capital of France?", "What does a cow say?", "Tell me about cats.", "Hello", "What is the opposite of big?"]) {
  const ids = await generateGreedyTfjs(config, weights, promptTokens([{ role: "user", content: question }]), { maxTokens: 80 });
  samples[question] = decodeTokens(ids);
  console.log(`> ${question}\n${samples[question]}`);
}

const card = {
  name: config.name,
  file: "svc-tiny.gguf",
  config,
  parameters: countParameters(weights),
  training: {
    seed,
    steps: result.steps,
    batchSize: Number(args.batch),
    learningRate: Number(args.lr),
    conversations: trainSet.length,
    initialEvalLoss: result.initialEvalLoss,
    finalEvalLoss: result.finalEvalLoss,
    tokensPerSecond: Math.round(result.tokensPerSecond),
    wallSeconds: Math.round(wallSeconds),
  },
  samples,
  license: "MIT (weights); corpus CC0, see corpus/LICENSE",
};
await writeFile(args.out.replace(/\.gguf$/, ".json"), JSON.stringify(card, null, 2) + "\n");
console.log(
  `wrote ${args.out}: ${card.parameters} parameters, eval loss ${result.initialEvalLoss.toFixed(3)} -> ${result.finalEvalLoss.toFixed(3)}, ${wallSeconds.toFixed(0)} s, ${result.tokensPerSecond.toFixed(0)} tok/s`,
);
