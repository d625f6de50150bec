/**
 * GGUF files svc must refuse or treat specially, built at test time:
 *
 *   buildUnsupportedArchModel()   a small random-weight phi3 model around the real Phi-3 vocabulary:
 *                                 a valid file llama.cpp loads and serves, whose architecture svc
 *                                 does not train (fused attn_qkv and gate+up tensors).
 *   truncatedCopy(path, bytes)    the first `bytes` bytes of a file (negative: all but the last -bytes).
 *   withoutChatTemplate(path)     the same model with tokenizer.chat_template removed (header edit;
 *                                 tensor data copied byte for byte, so any weight type works).
 *
 * Outputs go to the same per-process temp folder as testModels.ts's models.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { f32, str, u32, type GgufTensor, type GgufValue } from "../../engine/gguf/format.js";
import { writeGgufFile } from "../../engine/gguf/writer.js";
import { SeededRandom } from "../../engine/random.js";
import { readGgufLayout } from "./ggufMetadata.js";
import { testModelsDir, vocabMetadata } from "./testModels.js";

let unsupported: Promise<string> | undefined;

/** phi3 at d=32, 2 blocks, 4 heads (phi3 has no GQA key here: kv heads = heads), ff 64, context 256. */
export function buildUnsupportedArchModel(): Promise<string> {
  unsupported ??= (async () => {
    const d = 32,
      heads = 4,
      ff = 64,
      blocks = 2,
      headDim = d / heads;
    const vocab = await vocabMetadata("phi-3");
    const tokens = vocab.get("tokenizer.ggml.tokens")!.value as string[];
    const metadata = new Map<string, GgufValue>([
      ["general.architecture", str("phi3")],
      ["general.name", str("test-phi3")],
      ["general.file_type", u32(0)],
      ["phi3.context_length", u32(256)],
      ["phi3.embedding_length", u32(d)],
      ["phi3.feed_forward_length", u32(ff)],
      ["phi3.block_count", u32(blocks)],
      ["phi3.attention.head_count", u32(heads)],
      ["phi3.attention.head_count_kv", u32(heads)],
      ["phi3.attention.layer_norm_rms_epsilon", f32(1e-5)],
      ["phi3.rope.dimension_count", u32(headDim)],
      ["phi3.rope.freq_base", f32(10000)],
      ...vocab,
    ]);
    const rng = new SeededRandom(7);
    const tensor = (name: string, dims: number[], std: number, mean = 0): GgufTensor => {
      const data = rng.normalArray(
        dims.reduce((a, b) => a * b, 1),
        std,
      );
      if (mean) for (let i = 0; i < data.length; i++) data[i] += mean;
      return { name, dims, data };
    };
    const tensors: GgufTensor[] = [
      tensor("token_embd.weight", [d, tokens.length], 1),
      tensor("output_norm.weight", [d], 0.1, 1),
      tensor("output.weight", [d, tokens.length], 6 / Math.sqrt(d)),
    ];
    for (let b = 0; b < blocks; b++) {
      tensors.push(
        tensor(`blk.${b}.attn_norm.weight`, [d], 0.1, 1),
        tensor(`blk.${b}.attn_qkv.weight`, [d, 3 * d], 1 / Math.sqrt(d)),
        tensor(`blk.${b}.attn_output.weight`, [d, d], 2 / Math.sqrt(d)),
        tensor(`blk.${b}.ffn_norm.weight`, [d], 0.1, 1),
        tensor(`blk.${b}.ffn_up.weight`, [d, 2 * ff], 1 / Math.sqrt(d)),
        tensor(`blk.${b}.ffn_down.weight`, [ff, d], 2 / Math.sqrt(ff)),
      );
    }
    const target = path.join(await testModelsDir(), "test-phi3-unsupported.gguf");
    await writeGgufFile(target, { metadata, tensors });
    return target;
  })();
  return unsupported;
}

let copies = 0;

async function outputPath(source: string, suffix: string): Promise<string> {
  return path.join(await testModelsDir(), `${path.basename(source, ".gguf")}-${suffix}-${copies++}.gguf`);
}

/** A copy of the first `bytes` bytes of `source` (negative `bytes`: drop that many from the end). */
export async function truncatedCopy(source: string, bytes: number): Promise<string> {
  const buffer = await readFile(source);
  const length = bytes < 0 ? buffer.length + bytes : bytes;
  if (length < 0 || length >= buffer.length) throw new Error(`cannot truncate ${buffer.length} bytes to ${length}`);
  const target = await outputPath(source, `truncated${length}`);
  await writeFile(target, buffer.subarray(0, length));
  return target;
}

/** A copy of `source` without tokenizer.chat_template; throws if it has none. */
export async function withoutChatTemplate(source: string): Promise<string> {
  return withoutMetadataKey(source, "tokenizer.chat_template");
}

/**
 * Removes one metadata key at the byte level: the key's bytes go, the count drops by one, the
 * tensor infos are kept, and the data section is re-aligned (its offsets are relative to its start).
 */
export async function withoutMetadataKey(source: string, key: string): Promise<string> {
  const layout = await readGgufLayout(source);
  const range = layout.keyRanges.get(key);
  if (!range) throw new Error(`${source} has no ${key}`);
  const { buffer } = layout;
  const count = Buffer.alloc(8);
  count.writeBigUInt64LE(buffer.readBigUInt64LE(layout.kvCountOffset) - 1n);
  const header = Buffer.concat([
    buffer.subarray(0, layout.kvCountOffset),
    count,
    buffer.subarray(layout.kvCountOffset + 8, range[0]),
    buffer.subarray(range[1], layout.tensorInfoRange[1]),
  ]);
  const padding = Buffer.alloc((layout.alignment - (header.length % layout.alignment)) % layout.alignment);
  const target = await outputPath(source, `no-${key.replace(/[^a-z_]/gi, "_")}`);
  await writeFile(target, Buffer.concat([header, padding, buffer.subarray(layout.dataOffset)]));
  return target;
}
