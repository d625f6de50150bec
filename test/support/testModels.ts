/**
 * Random-weight GGUF models of real architectures around real vocabularies, so the engine's
 * forward passes (tfjs, torch) can be checked against llama.cpp on files shaped like the ones
 * users bring. Vocabularies come from llama.cpp's vocabulary-only GGUFs (test/support/
 * llamaCppSource.ts); every tokenizer.* key is copied, so llama.cpp tokenizes exactly as for the
 * real model.
 *
 *   buildTestModel(options) → path of the GGUF (built once per options per process, in a temp dir
 *                             removed at exit; SVC_KEEP_TMP=1 keeps it)
 *   resolveTestModelOptions(options) → the options with defaults filled in (the file's true shape)
 *   testModelFile(options)  → the same GGUF in memory ({metadata, tensors} with F32 data and `type`)
 *   storedType(tensor, weightType) → the ggml type a tensor is written as
 * Every arch gets key_length / value_length, rope.dimension_count = headDim, rms eps 1e-6.
 *
 * Options (all but arch and vocab optional):
 *   arch                'llama' | 'qwen2' | 'qwen3' — metadata and tensors llama.cpp loads for it:
 *                       qwen2 adds blk.N.attn_{q,k,v}.bias, qwen3 blk.N.attn_{q,k}_norm.weight
 *                       and attention.key_length / value_length (head width not d / heads).
 *   vocab               'llama-bpe' (Llama 3, 128K) | 'llama-spm' (Llama 2, 32K) | 'qwen2' (Qwen2/2.5/3,
 *                       152K) | any other models/ggml-vocab-NAME.gguf of llama.cpp.
 *   weightType          'F32' (default) | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q5_K' | 'Q6_K': the type
 *                       of the 2-D weights. 1-D tensors (norms, biases, rope_freqs) stay F32 as in
 *                       llama.cpp's quantizer, and so does every 2-D tensor whose row length (ne0) is
 *                       not a whole number of the type's blocks (32 for Q8_0/Q4_0, 256 for K-quants):
 *                       at the default d=32 Q8_0/Q4_0 quantise every matrix, K-quants only ffn_down
 *                       (ne0 = ff = 256); pass embeddingLength: 256 (and a matching headDim) for all. general.file_type says the type.
 *   embeddingLength     d, default 32 (the real vocabulary dominates the file size: 128K x 32 x 4 B = 16 MB).
 *   blockCount          default 2.
 *   headCount           default 4.   headCountKv default 2 (grouped-query attention).
 *   headDim             default d / headCount (qwen3 writes key_length even when equal).
 *   feedForwardLength   default 256 (a K-quant block, so quantised types always quantise ffn_down).
 *   contextLength       default 256.
 *   tiedOutput          no output.weight (default: false for llama and qwen2, true for qwen3 as Qwen3-0.6B).
 *   ropeFreqFactors     llama only: writes rope_freqs.weight [headDim/2] with Llama 3.1's scaling
 *                       (factor 8, low 1, high 4, original context 8192) — values between 1 and 8;
 *                       those only touch long wavelengths, which short prompts barely feel, so an
 *                       array of headDim/2 factors can be given instead (e.g. [2, 3, 5, 8]).
 *   ropeFreqBase        default 500000 for llama-bpe, 1e6 for qwen, 10000 otherwise.
 *   chatTemplate        string, or null for none; default a real template from models/templates:
 *                       Llama 3.1 for llama-bpe, Qwen3-0.6B (qwen3) / Qwen2.5 (qwen2) for qwen2; the
 *                       vocabulary's own (if any) otherwise — llama.cpp ships no Llama 2 template.
 *   seed                default 1.   name: general.name, default "test-<arch>-<vocab>-<type>".
 *
 * Weights are scaled so next-token distributions are peaked (logit std ~6 over the vocabulary:
 * greedy decoding is not decided by float noise) yet varied (different contexts pick different
 * tokens): token_embd ~ N(0, min(1, 6/sqrt(d))^2) (so tied logits also have std ~6 at any d),
 * output ~ N(0, (6/sqrt(d))^2), linear layers ~ N(0, 1/in) but attn_output and ffn_down
 * ~ N(0, 16/in) (blocks outweigh the input embedding, else tied models echo their input), norm weights
 * ~ 1 + N(0, 0.1^2), biases ~ N(0, 0.2^2).
 */
import { readFileSync, existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { f32, str, u32, type GgufTensor, type GgufValue } from "../../engine/gguf/format.js";
import { writeGgufFile } from "../../engine/gguf/writer.js";
import { SeededRandom } from "../../engine/random.js";
import { readGgufMetadata } from "./ggufMetadata.js";
import { llamaCppSource, vocabGguf } from "./llamaCppSource.js";

export type TestArch = "llama" | "qwen2" | "qwen3";
export type TestWeightType = "F32" | "F16" | "BF16" | "Q8_0" | "Q4_0" | "Q4_K" | "Q5_K" | "Q6_K";

export interface TestModelOptions {
  arch: TestArch;
  vocab: "llama-bpe" | "llama-spm" | "qwen2" | (string & {});
  weightType?: TestWeightType;
  embeddingLength?: number;
  blockCount?: number;
  headCount?: number;
  headCountKv?: number;
  headDim?: number;
  feedForwardLength?: number;
  contextLength?: number;
  tiedOutput?: boolean;
  ropeFreqFactors?: boolean | number[];
  ropeFreqBase?: number;
  chatTemplate?: string | null;
  seed?: number;
  name?: string;
}

/** The options with every default filled in: what the file actually contains. */
export type ResolvedTestModelOptions = Required<Omit<TestModelOptions, "chatTemplate">> & { chatTemplate: string | null };

/** ggml type number, block size and llama.cpp's LLAMA_FTYPE for each weight type. */
const WEIGHT_TYPES: Record<TestWeightType, { ggml: number; block: number; fileType: number }> = {
  F32: { ggml: 0, block: 1, fileType: 0 },
  F16: { ggml: 1, block: 1, fileType: 1 },
  BF16: { ggml: 30, block: 1, fileType: 32 },
  Q8_0: { ggml: 8, block: 32, fileType: 7 },
  Q4_0: { ggml: 2, block: 32, fileType: 2 },
  Q4_K: { ggml: 12, block: 256, fileType: 15 }, // MOSTLY_Q4_K_M
  Q5_K: { ggml: 13, block: 256, fileType: 17 }, // MOSTLY_Q5_K_M
  Q6_K: { ggml: 14, block: 256, fileType: 18 },
};

function defaultTemplate(arch: TestArch, vocab: string): string | null | undefined {
  const file =
    vocab === "llama-bpe"
      ? "meta-llama-Llama-3.1-8B-Instruct.jinja"
      : vocab === "qwen2"
        ? arch === "qwen3"
          ? "Qwen-Qwen3-0.6B.jinja"
          : "Qwen-Qwen2.5-7B-Instruct.jinja"
        : undefined;
  // undefined: keep whatever the vocabulary file carries (usually nothing).
  return file ? readFileSync(path.join(llamaCppSource(), "models/templates", file), "utf8") : undefined;
}

export function resolveTestModelOptions(options: TestModelOptions): ResolvedTestModelOptions {
  const d = options.embeddingLength ?? 32;
  const headCount = options.headCount ?? 4;
  const weightType = options.weightType ?? "F32";
  return {
    arch: options.arch,
    vocab: options.vocab,
    weightType,
    embeddingLength: d,
    blockCount: options.blockCount ?? 2,
    headCount,
    headCountKv: options.headCountKv ?? Math.min(2, headCount),
    headDim: options.headDim ?? d / headCount,
    feedForwardLength: options.feedForwardLength ?? 256,
    contextLength: options.contextLength ?? 256,
    tiedOutput: options.tiedOutput ?? options.arch === "qwen3",
    ropeFreqFactors: options.ropeFreqFactors ?? false,
    ropeFreqBase: options.ropeFreqBase ?? (options.arch !== "llama" ? 1e6 : options.vocab === "llama-bpe" ? 500000 : 10000),
    chatTemplate: options.chatTemplate === undefined ? (defaultTemplate(options.arch, options.vocab) ?? null) : options.chatTemplate,
    seed: options.seed ?? 1,
    name: options.name ?? `test-${options.arch}-${options.vocab}-${weightType}`,
  };
}

/** Llama 3.1's rope_freqs: 1 for short wavelengths, `factor` for long ones, smooth in between. */
export function llama3RopeFactors(headDim: number, freqBase: number): Float32Array {
  const factor = 8,
    lowFreqFactor = 1,
    highFreqFactor = 4,
    originalContext = 8192;
  const lowFreqWavelen = originalContext / lowFreqFactor;
  const highFreqWavelen = originalContext / highFreqFactor;
  const out = new Float32Array(headDim / 2);
  for (let i = 0; i < headDim / 2; i++) {
    const wavelen = (2 * Math.PI) / Math.pow(freqBase, (2 * i) / headDim);
    if (wavelen < highFreqWavelen) out[i] = 1;
    else if (wavelen > lowFreqWavelen) out[i] = factor;
    else {
      const smooth = (originalContext / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
      out[i] = 1 / ((1 - smooth) / factor + smooth);
    }
  }
  return out;
}

function archMetadata(o: ResolvedTestModelOptions, vocabSize: number): Array<[string, GgufValue]> {
  const a = o.arch;
  return [
    ["general.architecture", str(a)],
    ["general.name", str(o.name)],
    ["general.file_type", u32(WEIGHT_TYPES[o.weightType].fileType)],
    [`${a}.vocab_size`, u32(vocabSize)],
    [`${a}.context_length`, u32(o.contextLength)],
    [`${a}.embedding_length`, u32(o.embeddingLength)],
    [`${a}.block_count`, u32(o.blockCount)],
    [`${a}.feed_forward_length`, u32(o.feedForwardLength)],
    [`${a}.attention.head_count`, u32(o.headCount)],
    [`${a}.attention.head_count_kv`, u32(o.headCountKv)],
    [`${a}.attention.key_length`, u32(o.headDim)],
    [`${a}.attention.value_length`, u32(o.headDim)],
    [`${a}.attention.layer_norm_rms_epsilon`, f32(1e-6)],
    [`${a}.rope.freq_base`, f32(o.ropeFreqBase)],
    [`${a}.rope.dimension_count`, u32(o.headDim)],
  ];
}

/** Every tensor llama.cpp loads for the arch, with ggml dims (ne0 = input width) and random data. */
export function testModelTensors(o: ResolvedTestModelOptions, vocabSize: number): GgufTensor[] {
  const rng = new SeededRandom(o.seed);
  const d = o.embeddingLength;
  const qWidth = o.headCount * o.headDim;
  const kvWidth = o.headCountKv * o.headDim;
  const tensors: GgufTensor[] = [];
  const normal = (name: string, dims: number[], std: number) =>
    tensors.push({
      name,
      dims,
      data: rng.normalArray(
        dims.reduce((x, y) => x * y, 1),
        std,
      ),
    });
  // gain > 1 on the projections back into the residual stream, so blocks outweigh the token's own
  // embedding (with tied output a model would otherwise keep predicting its input token).
  const linear = (name: string, inWidth: number, outWidth: number, gain = 1) => normal(name, [inWidth, outWidth], gain / Math.sqrt(inWidth));
  const norm = (name: string, width: number) => {
    const data = rng.normalArray(width, 0.1);
    for (let i = 0; i < width; i++) data[i] += 1;
    tensors.push({ name, dims: [width], data });
  };

  normal("token_embd.weight", [d, vocabSize], Math.min(1, 6 / Math.sqrt(d)));
  norm("output_norm.weight", d);
  if (!o.tiedOutput) normal("output.weight", [d, vocabSize], 6 / Math.sqrt(d));
  if (o.ropeFreqFactors !== false) {
    if (o.arch !== "llama") throw new Error("ropeFreqFactors is a llama (Llama 3.1) feature");
    const factors = Array.isArray(o.ropeFreqFactors) ? Float32Array.from(o.ropeFreqFactors) : llama3RopeFactors(o.headDim, o.ropeFreqBase);
    if (factors.length !== o.headDim / 2) throw new Error(`rope_freqs needs headDim/2 = ${o.headDim / 2} factors, got ${factors.length}`);
    tensors.push({ name: "rope_freqs.weight", dims: [o.headDim / 2], data: factors });
  }
  for (let b = 0; b < o.blockCount; b++) {
    const p = `blk.${b}`;
    norm(`${p}.attn_norm.weight`, d);
    linear(`${p}.attn_q.weight`, d, qWidth);
    linear(`${p}.attn_k.weight`, d, kvWidth);
    linear(`${p}.attn_v.weight`, d, kvWidth);
    if (o.arch === "qwen2") {
      normal(`${p}.attn_q.bias`, [qWidth], 0.2);
      normal(`${p}.attn_k.bias`, [kvWidth], 0.2);
      normal(`${p}.attn_v.bias`, [kvWidth], 0.2);
    }
    if (o.arch === "qwen3") {
      norm(`${p}.attn_q_norm.weight`, o.headDim);
      norm(`${p}.attn_k_norm.weight`, o.headDim);
    }
    linear(`${p}.attn_output.weight`, qWidth, d, 4);
    norm(`${p}.ffn_norm.weight`, d);
    linear(`${p}.ffn_gate.weight`, d, o.feedForwardLength);
    linear(`${p}.ffn_up.weight`, d, o.feedForwardLength);
    linear(`${p}.ffn_down.weight`, o.feedForwardLength, d, 4);
  }
  return tensors;
}

/**
 * The ggml type a tensor is stored as: the requested type for 2-D weights whose rows fill whole
 * blocks, F32 otherwise (llama.cpp's quantizer also keeps 1-D tensors in F32).
 */
export function storedType(tensor: Pick<GgufTensor, "dims">, weightType: TestWeightType): number {
  const { ggml, block } = WEIGHT_TYPES[weightType];
  return tensor.dims.length === 2 && tensor.dims[0] % block === 0 ? ggml : 0;
}

/** Vocabulary metadata: every tokenizer.* key of llama.cpp's vocabulary-only GGUF, cached per name. */
const vocabCache = new Map<string, Promise<Map<string, GgufValue>>>();
export function vocabMetadata(vocab: string): Promise<Map<string, GgufValue>> {
  let cached = vocabCache.get(vocab);
  if (!cached) {
    cached = readGgufMetadata(vocabGguf(vocab)).then((all) => new Map([...all].filter(([key]) => key.startsWith("tokenizer."))));
    vocabCache.set(vocab, cached);
  }
  return cached;
}

/** Builds a GGUF in memory (metadata + tensors with their stored types set). */
export async function testModelFile(options: TestModelOptions): Promise<{ metadata: Map<string, GgufValue>; tensors: GgufTensor[] }> {
  const o = resolveTestModelOptions(options);
  const vocab = await vocabMetadata(o.vocab);
  const tokens = vocab.get("tokenizer.ggml.tokens");
  if (!tokens || !Array.isArray(tokens.value)) throw new Error(`vocabulary ${o.vocab} has no tokenizer.ggml.tokens`);
  const vocabSize = tokens.value.length;
  const metadata = new Map<string, GgufValue>(archMetadata(o, vocabSize));
  for (const [key, value] of vocab) if (key !== "tokenizer.chat_template") metadata.set(key, value);
  const template = o.chatTemplate ?? (options.chatTemplate === null ? null : vocab.get("tokenizer.chat_template"));
  if (typeof template === "string") metadata.set("tokenizer.chat_template", str(template));
  else if (template) metadata.set("tokenizer.chat_template", template);
  const tensors = testModelTensors(o, vocabSize).map((t) => withStoredType(t, o.weightType));
  return { metadata, tensors };
}

function withStoredType(tensor: GgufTensor, weightType: TestWeightType): GgufTensor {
  const type = storedType(tensor, weightType);
  return type === 0 ? tensor : { ...tensor, type };
}

const builds = new Map<string, Promise<string>>();
let buildDir: string | undefined;

/** Where built models go: one folder per process, removed at exit unless SVC_KEEP_TMP=1. */
export async function testModelsDir(): Promise<string> {
  if (!buildDir) {
    const { createTempDir } = await import("./tmp.js");
    buildDir = (await createTempDir("test-models")).path;
  }
  await mkdir(buildDir, { recursive: true });
  return buildDir;
}

/** Stable key for the options with defaults filled in (template text included, via its length + hash). */
function cacheKey(o: ResolvedTestModelOptions): string {
  return JSON.stringify({ ...o, chatTemplate: o.chatTemplate === null ? null : hash(o.chatTemplate) });
}

function hash(text: string): string {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return `${text.length}:${(h >>> 0).toString(16)}`;
}

/** Writes the model (see the header for options) and returns its path; one build per options per process. */
export function buildTestModel(options: TestModelOptions): Promise<string> {
  const resolved = resolveTestModelOptions(options);
  const key = cacheKey(resolved) + (options.chatTemplate === undefined ? ":default" : "");
  let build = builds.get(key);
  if (!build) {
    const serial = builds.size; // taken now: concurrent builds must not share a file name
    build = (async () => {
      const file = await testModelFile(options);
      const dir = await testModelsDir();
      const target = path.join(dir, `${resolved.name.replace(/[^A-Za-z0-9._-]/g, "_")}-${serial}.gguf`);
      await writeGgufFile(target, file); // quantises each tensor to its `type`
      if (!existsSync(target)) throw new Error(`test model ${target} was not written`);
      return target;
    })();
    builds.set(key, build);
  }
  return build;
}

/**
 * The same model with every tensor stored as F32, holding exactly the values svc dequantises the
 * original to: llama.cpp on this copy computes what the engine computes on the original, without
 * the activation rounding llama.cpp applies before products with half or quantised matrices.
 */
export async function dequantisedCopy(modelPath: string): Promise<string> {
  const { readGgufFile } = await import("../../engine/gguf/reader.js");
  const file = await readGgufFile(modelPath);
  const out = path.join(await testModelsDir(), `${path.basename(modelPath, ".gguf")}-dequantised.gguf`);
  await writeGgufFile(out, { metadata: file.metadata, tensors: file.tensors.map(({ name, dims, data }) => ({ name, dims, data })) });
  return out;
}
