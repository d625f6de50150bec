/**
 * Random LoRA adapters in llama.cpp's GGUF adapter format for models from testModels.ts, so
 * LoRA forward passes can be compared with llama.cpp (greedy(path, ids, n, {lora})).
 *
 *   buildTestAdapter(modelOptions, {rank?, alpha?, targets?, seed?}) → adapter path
 *
 * Tensors: `blk.N.<target>.weight.lora_a` with ggml dims [in, r] and `.lora_b` with [r, out]
 * (llama.cpp's layout; engine/gguf/adapter-file.ts writes the same), both random and F32, so the
 * adapter visibly changes the output (a freshly initialised LoRA, B = 0, would not).
 * Targets are the model's tensor names without `blk.N.` and `.weight`: attn_q, attn_k, attn_v,
 * attn_output, ffn_gate, ffn_up, ffn_down (default: all of them).
 */
import path from "node:path";
import { f32, str, type GgufTensor, type GgufValue } from "../../engine/gguf/format.js";
import { writeGgufFile } from "../../engine/gguf/writer.js";
import { SeededRandom } from "../../engine/random.js";
import { resolveTestModelOptions, testModelsDir, type TestModelOptions } from "./testModels.js";

export interface TestAdapterOptions {
  rank?: number;
  /** llama.cpp scales B·A by alpha / rank. Default: rank (scale 1). */
  alpha?: number;
  targets?: string[];
  seed?: number;
}

const ALL_TARGETS = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"];
const builds = new Map<string, Promise<string>>();

export function buildTestAdapter(model: TestModelOptions, options: TestAdapterOptions = {}): Promise<string> {
  const o = resolveTestModelOptions(model);
  const rank = options.rank ?? 4;
  const alpha = options.alpha ?? rank;
  const targets = options.targets ?? ALL_TARGETS;
  const seed = options.seed ?? 11;
  const key = JSON.stringify([o.arch, o.embeddingLength, o.blockCount, o.headCount, o.headCountKv, o.headDim, o.feedForwardLength, rank, alpha, targets, seed]);
  let build = builds.get(key);
  if (!build) {
    const serial = builds.size;
    build = (async () => {
      const qWidth = o.headCount * o.headDim;
      const kvWidth = o.headCountKv * o.headDim;
      const d = o.embeddingLength;
      const widths: Record<string, [number, number]> = {
        attn_q: [d, qWidth],
        attn_k: [d, kvWidth],
        attn_v: [d, kvWidth],
        attn_output: [qWidth, d],
        ffn_gate: [d, o.feedForwardLength],
        ffn_up: [d, o.feedForwardLength],
        ffn_down: [o.feedForwardLength, d],
      };
      const rng = new SeededRandom(seed);
      const tensors: GgufTensor[] = [];
      for (let b = 0; b < o.blockCount; b++) {
        for (const target of targets) {
          const [inWidth, outWidth] =
            widths[target] ??
            (() => {
              throw new Error(`unknown LoRA target ${target}`);
            })();
          const name = `blk.${b}.${target}.weight`;
          // B·A·x has about the size of the base layer's output: a clear but not overwhelming change.
          tensors.push({ name: `${name}.lora_a`, dims: [inWidth, rank], data: rng.normalArray(inWidth * rank, 1 / Math.sqrt(inWidth)) });
          tensors.push({ name: `${name}.lora_b`, dims: [rank, outWidth], data: rng.normalArray(rank * outWidth, 1 / Math.sqrt(rank)) });
        }
      }
      const metadata = new Map<string, GgufValue>([
        ["general.architecture", str(o.arch)],
        ["general.type", str("adapter")],
        ["general.name", str(`${o.name}-lora`)],
        ["adapter.type", str("lora")],
        ["adapter.lora.alpha", f32(alpha)],
      ]);
      const target = path.join(await testModelsDir(), `${o.name}-lora-${serial}.gguf`);
      await writeGgufFile(target, { metadata, tensors });
      return target;
    })();
    builds.set(key, build);
  }
  return build;
}
