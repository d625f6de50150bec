/**
 * Measurements for `npm run bench`: this machine's wasm matmul peak, and LoRA training
 * throughput on the quickstart configuration, so throughput can be reported as a fraction of
 * peak. The FLOP count is the usual estimate (forward 2 FLOPs per weight per token; backward
 * 2 more for activation gradients, plus 2 for weight gradients of trainable tensors) plus the
 * attention products, which have no weights.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initTf, tf } from "../../engine/backend.js";
import { readChatJsonl } from "../../engine/data/chat-jsonl.js";
import { loadModelGguf } from "../../engine/gguf/model-file.js";
import type { ModelConfig } from "../../engine/model/config.js";
import { renderChat } from "../../engine/tokenizer.js";
import { disposeWeights } from "../../engine/model/weights.js";
import { trainLora } from "../../engine/train/lora-trainer.js";
import { QUICKSTART_HYPERPARAMETERS as QS } from "../../engine/train/quickstart.js";

export interface MatmulPeak {
  /** Best GFLOP/s over the sizes tried. */
  peakGflops: number;
  bySize: Array<{ size: number; gflops: number }>;
}

/** Square float32 matmuls on the wasm backend for ~`secondsPerSize` each; the fast (untransposed) path. */
export async function measureMatmulPeak(sizes: number[] = [128, 256, 512], secondsPerSize = 1): Promise<MatmulPeak> {
  await initTf();
  const bySize: MatmulPeak["bySize"] = [];
  for (const size of sizes) {
    const a = tf.randomNormal([size, size], 0, 1, "float32", 1);
    const b = tf.randomNormal([size, size], 0, 1, "float32", 2);
    tf.matMul(a, b).dispose(); // warm-up (XNNPACK packs the right operand once)
    let runs = 0;
    const started = performance.now();
    while (performance.now() - started < secondsPerSize * 1000) {
      const c = tf.matMul(a, b);
      c.dataSync();
      c.dispose();
      runs++;
    }
    const seconds = (performance.now() - started) / 1000;
    bySize.push({ size, gflops: (2 * size ** 3 * runs) / seconds / 1e9 });
    a.dispose();
    b.dispose();
  }
  return { peakGflops: Math.max(...bySize.map((s) => s.gflops)), bySize };
}

/** Estimated training FLOPs per token for a sequence of `length` tokens. */
export function trainingFlopsPerToken(config: ModelConfig, length: number, mode: "full" | "lora"): number {
  const d = config.embeddingLength;
  const perBlock = 4 * d * d + 3 * d * config.feedForwardLength;
  const weights = config.blockCount * perBlock + 2 * config.vocabSize * d; // one-hot embedding + output
  const attention = config.blockCount * 2 * 2 * length * d; // QK^T and AV, per token
  const forward = 2 * weights + attention;
  return mode === "full" ? 3 * forward : 2 * forward; // LoRA: no base weight gradients
}

export interface LoraBenchResult {
  tokensPerSecond: number;
  steps: number;
  wallSeconds: number;
  /** Achieved GFLOP/s by the estimate above. */
  achievedGflops: number;
  /** achievedGflops / peak, when a peak is given. */
  fractionOfPeak?: number;
}

export interface LoraBenchOptions {
  baseModelPath: string;
  trainPath: string;
  steps?: number;
  batchSize?: number;
  learningRate?: number;
  r?: number;
  alpha?: number;
  peakGflops?: number;
}

/** Runs a short LoRA fine-tune (quickstart settings, 20 steps by default) in a temp dir and reports its throughput. */
export async function measureLoraThroughput(options: LoraBenchOptions): Promise<LoraBenchResult> {
  await initTf();
  const base = await loadModelGguf(options.baseModelPath);
  const train = await readChatJsonl(options.trainPath, { contextLength: base.config.contextLength });
  const outputDir = await mkdtemp(join(tmpdir(), "svc-bench-"));
  try {
    const result = await trainLora({
      baseModel: base,
      train,
      outputDir,
      lora: { ...QS.lora, r: options.r ?? QS.lora.r, alpha: options.alpha ?? QS.lora.alpha },
      maxSteps: options.steps ?? 20,
      batchSize: options.batchSize ?? QS.batchSize,
      learningRate: options.learningRate ?? QS.learningRate,
      seed: QS.seed,
    });
    const meanLength = train.reduce((sum, e) => sum + renderChat(e.messages).ids.length, 0) / train.length;
    const achievedGflops = (result.tokensPerSecond * trainingFlopsPerToken(base.config, meanLength, "lora")) / 1e9;
    return {
      tokensPerSecond: result.tokensPerSecond,
      steps: result.steps,
      wallSeconds: result.wallSeconds,
      achievedGflops,
      ...(options.peakGflops ? { fractionOfPeak: achievedGflops / options.peakGflops } : {}),
    };
  } finally {
    disposeWeights(base.weights);
    await rm(outputDir, { recursive: true, force: true });
  }
}
