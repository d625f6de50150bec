/**
 * Small but real GGUF model files for tests of registration and discovery: the metadata keys and
 * tensor layout of a llama / qwen2 / qwen3 model (or of any other architecture name, to get a
 * serve-only file), at toy sizes, written with engine/gguf/writer.ts. Model files are never
 * committed; tests write these at run time.
 */
import { writeFile } from "node:fs/promises";
import { GgufValueType, f32, str, strArray, u32, type GgufValue } from "../../engine/gguf/format.js";
import { encodeGguf } from "../../engine/gguf/writer.js";
import { llamaConfig, type Architecture } from "../../engine/model/config.js";
import { isLinearWeight, weightShapes } from "../../engine/model/weights.js";

export interface TinyModelSpec {
  /** general.architecture; llama, qwen2 and qwen3 get their real tensor layout, others llama's. */
  architecture: string;
  /** general.name; left out when undefined (names then come from the file). */
  name?: string;
  contextLength?: number;
  /** general.file_type, llama.cpp's LLAMA_FTYPE (15 = MOSTLY_Q4_K_M, 7 = MOSTLY_Q8_0). */
  fileType?: number;
  chatTemplate?: string;
}

export interface TinyModel {
  path: string;
  /** Weights in the file, for comparing with the reported parameter count. */
  parameters: number;
  sizeBytes: number;
}

const VOCAB = 32;

export async function writeTinyModel(file: string, spec: TinyModelSpec): Promise<TinyModel> {
  const trainableShape = ["llama", "qwen2", "qwen3"].includes(spec.architecture);
  const config = llamaConfig({
    name: spec.name ?? "tiny",
    vocabSize: VOCAB,
    contextLength: spec.contextLength ?? 64,
    embeddingLength: 16,
    blockCount: 1,
    headCount: 2,
    headCountKv: 1,
    feedForwardLength: 24,
    architecture: (trainableShape ? spec.architecture : "llama") as Architecture,
    ...(spec.architecture === "qwen2" ? { ropeStyle: "neox", attentionBias: true } : {}),
    ...(spec.architecture === "qwen3" ? { ropeStyle: "neox", qkNorm: true, tiedOutput: true } : {}),
  });
  const arch = spec.architecture;
  const metadata = new Map<string, GgufValue>([
    ["general.architecture", str(arch)],
    ...(spec.name !== undefined ? ([["general.name", str(spec.name)]] as const) : []),
    ...(spec.fileType !== undefined ? ([["general.file_type", u32(spec.fileType)]] as const) : []),
    [`${arch}.vocab_size`, u32(VOCAB)],
    [`${arch}.context_length`, u32(config.contextLength)],
    [`${arch}.embedding_length`, u32(config.embeddingLength)],
    [`${arch}.block_count`, u32(config.blockCount)],
    [`${arch}.feed_forward_length`, u32(config.feedForwardLength)],
    [`${arch}.attention.head_count`, u32(config.headCount)],
    [`${arch}.attention.head_count_kv`, u32(config.headCountKv)],
    [`${arch}.attention.key_length`, u32(config.headDim)],
    [`${arch}.attention.value_length`, u32(config.headDim)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(config.rmsNormEpsilon)],
    [`${arch}.rope.freq_base`, f32(config.ropeFreqBase)],
    ["tokenizer.ggml.model", str("gpt2")],
    ["tokenizer.ggml.tokens", strArray(Array.from({ length: VOCAB }, (_, i) => `t${i}`))],
    ["tokenizer.ggml.token_type", { type: GgufValueType.ARRAY, itemType: GgufValueType.INT32, value: Array.from({ length: VOCAB }, () => 1) }],
    ...(spec.chatTemplate !== undefined ? ([["tokenizer.chat_template", str(spec.chatTemplate)]] as const) : []),
  ]);
  // ggml lists the row length first: linear weights keep [in, out], others are reversed.
  const tensors = weightShapes(config).map(([name, shape]) => {
    const dims = shape.length === 2 && !isLinearWeight(name) ? [shape[1], shape[0]] : shape;
    return { name, dims, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) };
  });
  const bytes = encodeGguf({ metadata, tensors });
  await writeFile(file, bytes);
  return { path: file, parameters: tensors.reduce((sum, t) => sum + t.data.length, 0), sizeBytes: bytes.length };
}
