/**
 * The tfjs LoRA step as the engine of an earlier commit ran it, timed in this process on this
 * run's batches: issue 14's goal for tfjs is a ratio against the engine of commit 91e4272 (before
 * the issue) on a d=256 × 4 blocks model, and a ratio only means something if both sides ran
 * under the same load. The commit's engine/ folder is extracted (git archive) under the
 * git-ignored .tmp/ so that it resolves the same node_modules, and so the same tfjs instance.
 *
 * It speaks that engine's own API (initWeights, initLora, AdamW, trainStep on tokenised
 * examples), which is stable from 91e4272 up to the compute-backend seam; another commit may
 * need another adapter here.
 */
import { execFile } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import type { TokenBatch } from "../../engine/backends/types.js";
import type { ModelConfig } from "../../engine/model/config.js";
import { repoRoot } from "../support/cloud.js";

const run = promisify(execFile);

export const BEFORE_ISSUE_14 = "91e4272";

interface OldEngine {
  initWeights(config: object, seed: number): Record<string, { dispose(): void }>;
  initLora(config: object, lora: object, seed: number): { weights: Record<string, { dispose(): void }> };
  AdamW: new (options: object) => { dispose(): void };
  trainStep(target: object, optimizer: object, examples: Array<{ ids: number[]; lossMask: number[] }>, learningRate: number): unknown;
}

/** Extracts the commit's engine/ (once per run); a sentence instead when this clone lacks the commit. */
async function extractEngine(commit: string): Promise<{ dir: string } | { reason: string }> {
  const dir = path.join(repoRoot, ".tmp", `engine-at-${commit}`);
  try {
    await run("git", ["-C", repoRoot, "cat-file", "-e", `${commit}^{commit}`]);
  } catch {
    return { reason: `commit ${commit} is not in this clone (a shallow clone?)` };
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await run("sh", ["-c", `git -C "${repoRoot}" archive ${commit} engine | tar -x -C "${dir}"`]);
  return { dir };
}

async function loadEngine(dir: string): Promise<OldEngine> {
  const from = (file: string) => import(path.join(dir, "engine", file));
  const [weights, lora, adamw, step] = await Promise.all([from("model/weights.ts"), from("lora.ts"), from("train/adamw.ts"), from("train/step.ts")]);
  return { initWeights: weights.initWeights, initLora: lora.initLora, AdamW: adamw.AdamW, trainStep: step.trainStep };
}

/** Each row of a packed batch as the tokenised example it came from (every target position carries loss). */
function examplesOf(batch: TokenBatch): Array<{ ids: number[]; lossMask: number[] }> {
  return Array.from({ length: batch.batchSize }, (_, row) => {
    const from = row * batch.length;
    const ids = [...batch.inputs.subarray(from, from + batch.length), batch.targets[from + batch.length - 1]];
    return { ids, lossMask: [0, ...Array.from(batch.mask.subarray(from, from + batch.length))] };
  });
}

/**
 * Tokens/s of the commit's tfjs LoRA step (random weights: the speed does not depend on them) on
 * `batches`, after `warmup` untimed steps; or why it could not run.
 */
export async function timeTfjsAtCommit(
  commit: string,
  c: { config: ModelConfig; batches: TokenBatch[]; lora: { r: number; alpha: number; targetModules: string[] }; warmup: number; steps: number },
): Promise<{ tokensPerSecond: number; stepSeconds: number } | { reason: string }> {
  const extracted = await extractEngine(commit);
  if ("reason" in extracted) return extracted;
  const engine = await loadEngine(extracted.dir);
  const { config } = c;
  if (config.headCountKv !== config.headCount || config.tiedOutput || config.architecture !== "llama")
    return { reason: `the engine of ${commit} trains plain llama shapes only` };
  const oldConfig = {
    name: config.name,
    vocabSize: config.vocabSize,
    contextLength: config.contextLength,
    embeddingLength: config.embeddingLength,
    blockCount: config.blockCount,
    headCount: config.headCount,
    feedForwardLength: config.feedForwardLength,
    rmsNormEpsilon: config.rmsNormEpsilon,
    ropeFreqBase: config.ropeFreqBase,
  };
  const base = engine.initWeights(oldConfig, 1);
  const adapter = engine.initLora(oldConfig, c.lora, 1);
  const optimizer = new engine.AdamW({});
  const target = { kind: "lora", config: oldConfig, base, adapter };
  const examples = c.batches.map(examplesOf);
  try {
    let tokens = 0;
    let started = 0;
    for (let i = 0; i < c.warmup + c.steps; i++) {
      if (i === c.warmup) started = performance.now();
      engine.trainStep(target, optimizer, examples[i % examples.length], 1e-4);
      if (i >= c.warmup) tokens += c.batches[i % c.batches.length].tokens;
    }
    const seconds = (performance.now() - started) / 1000;
    return { tokensPerSecond: tokens / seconds, stepSeconds: seconds / c.steps };
  } finally {
    optimizer.dispose();
    for (const t of Object.values(adapter.weights)) t.dispose();
    for (const t of Object.values(base)) t.dispose();
    await rm(extracted.dir, { recursive: true, force: true });
  }
}
