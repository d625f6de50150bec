/**
 * A base GGUF with a LoRA adapter (llama.cpp's adapter GGUF) merged into its weights, written as
 * one GGUF that llama.cpp loads without an adapter: W' = W + (alpha / r) · B·A, the sum llama.cpp
 * computes at every token when it applies the adapter. Pure TypeScript, so an export needs no
 * compiler and no Python on the user's machine.
 *
 * The base is read and the result written one tensor at a time (offsets are known from each
 * type's block geometry before any data is written), so a multi-GB model is never held whole.
 * The output goes to a temporary name beside the target and is renamed into place at the end:
 * a failed or interrupted merge leaves nothing at the target.
 */
import { open, rename, rm } from 'node:fs/promises';
import { GGML_TYPE_F32, GGUF_ALIGNMENT, str, u32, type GgufValue, type GgufTensorInfo } from './format.js';
import { GgmlType, ggmlByteLength, ggmlTypeInfo } from './ggml-types.js';
import { quantize } from './quantize.js';
import { openGgufTensors, readGgufFile } from './reader.js';
import { encodeGgufHeader } from './writer.js';

/** The types an export writes its matrices in (llama.cpp's names, lower case as on the command line); f32 loses nothing. */
export type MergedWeightType = 'f32' | 'f16' | 'q8_0';

/** llama.cpp's general.file_type (LLAMA_FTYPE_ALL_F32, LLAMA_FTYPE_MOSTLY_*) for each. */
const FILE_TYPE: Record<MergedWeightType, number> = { f32: 0, f16: 1, q8_0: 7 };
const GGML: Record<MergedWeightType, number> = { f32: GGML_TYPE_F32, f16: GgmlType.F16, q8_0: GgmlType.Q8_0 };

export interface MergeProgress {
  /** Tensors written so far, of `total`. */
  done: number;
  total: number;
}

export interface MergeLoraOptions {
  base: string;
  adapter: string;
  out: string;
  type: MergedWeightType;
  /** Shown in general.name of the merged model. */
  name?: string;
  onProgress?: (progress: MergeProgress) => void;
}

export interface MergeLoraResult {
  /** Base tensors the adapter changed. */
  mergedTensors: number;
  bytes: number;
}

interface LoraPair {
  a: Float32Array;
  b: Float32Array;
  rank: number;
}

/** The adapter's pairs by the base tensor they change, checked against the base. */
async function adapterPairs(adapterPath: string, baseArchitecture: string | undefined): Promise<{ pairs: Map<string, LoraPair>; alpha: number }> {
  const adapter = await readGgufFile(adapterPath);
  const type = adapter.metadata.get('general.type')?.value;
  if (type !== 'adapter' || adapter.metadata.get('adapter.type')?.value !== 'lora') throw new Error(`${adapterPath} is not a LoRA adapter GGUF`);
  const architecture = adapter.metadata.get('general.architecture')?.value;
  if (baseArchitecture && architecture !== baseArchitecture)
    throw new Error(`the adapter was trained for a ${String(architecture)} model, the base is ${baseArchitecture}`);
  const alpha = Number(adapter.metadata.get('adapter.lora.alpha')?.value);
  const halves = new Map<string, { a?: { data: Float32Array; dims: number[] }; b?: { data: Float32Array; dims: number[] } }>();
  for (const tensor of adapter.tensors) {
    const match = /^(.+)\.lora_(a|b)$/.exec(tensor.name);
    if (!match) throw new Error(`unexpected tensor ${tensor.name} in the LoRA adapter`);
    const entry = halves.get(match[1]) ?? {};
    entry[match[2] as 'a' | 'b'] = { data: tensor.data, dims: tensor.dims };
    halves.set(match[1], entry);
  }
  const pairs = new Map<string, LoraPair>();
  for (const [name, { a, b }] of halves) {
    if (!a || !b) throw new Error(`the LoRA adapter has only one half of ${name}`);
    // ggml dims: lora_a [in, r], lora_b [r, out].
    if (a.dims[1] !== b.dims[0]) throw new Error(`the LoRA adapter's ${name} halves disagree on the rank`);
    pairs.set(name, { a: a.data, b: b.data, rank: a.dims[1] });
  }
  if (!Number.isFinite(alpha) || alpha <= 0) throw new Error('the LoRA adapter has no adapter.lora.alpha');
  return { pairs, alpha };
}

/** W (out rows of `inWidth`) += scale · B (out × r) · A (r × inWidth), in place. */
function addLowRank(weight: Float32Array, inWidth: number, pair: LoraPair, scale: number): void {
  const { a, b, rank } = pair;
  const outWidth = weight.length / inWidth;
  for (let o = 0; o < outWidth; o++) {
    const row = o * inWidth;
    for (let k = 0; k < rank; k++) {
      const coefficient = scale * b[o * rank + k];
      if (coefficient === 0) continue;
      const aRow = k * inWidth;
      for (let i = 0; i < inWidth; i++) weight[row + i] += coefficient * a[aRow + i];
    }
  }
}

/** The type a tensor is written in: matrices in the export's type (when their rows are whole blocks), vectors stay F32 like llama-quantize leaves norms. */
function outputType(info: GgufTensorInfo, target: number): number {
  if (info.dims.length < 2) return GGML_TYPE_F32;
  return info.dims[0] % ggmlTypeInfo(target, info.name).blockElements === 0 ? target : GgmlType.F16;
}

export async function mergeLora(options: MergeLoraOptions): Promise<MergeLoraResult> {
  const base = await openGgufTensors(options.base);
  const temp = `${options.out}.partial-${process.pid}`;
  try {
    const architecture = base.header.metadata.get('general.architecture')?.value;
    const { pairs, alpha } = await adapterPairs(options.adapter, typeof architecture === 'string' ? architecture : undefined);
    const names = new Set(base.header.tensors.map((t) => t.name));
    for (const name of pairs.keys())
      if (!names.has(name)) throw new Error(`the LoRA adapter changes ${name}, which the base model does not have: it was trained for another model`);

    const target = GGML[options.type];
    const metadata = new Map<string, GgufValue>(base.header.metadata);
    metadata.set('general.file_type', u32(FILE_TYPE[options.type]));
    if (options.name) metadata.set('general.name', str(options.name));
    metadata.delete('general.alignment');

    const plan = base.header.tensors.map((info) => {
      const type = outputType(info, target);
      const count = info.dims.reduce((x, y) => x * y, 1);
      return { info, type, bytes: ggmlByteLength(type, count, info.name) };
    });
    const header = encodeGgufHeader(
      metadata,
      plan.map(({ info, type, bytes }) => ({ name: info.name, dims: info.dims, type, bytes })),
    );
    const handle = await open(temp, 'w');
    let written = 0;
    try {
      await handle.write(header);
      written = header.length;
      let done = 0;
      for (const { info, type } of plan) {
        const data = await base.readF32(info.name);
        const pair = pairs.get(info.name);
        if (pair) addLowRank(data, info.dims[0], pair, alpha / pair.rank);
        const bytes = quantize(type, data);
        await handle.write(bytes);
        written += bytes.byteLength;
        const pad = (GGUF_ALIGNMENT - (bytes.byteLength % GGUF_ALIGNMENT)) % GGUF_ALIGNMENT;
        if (pad) {
          await handle.write(Buffer.alloc(pad));
          written += pad;
        }
        options.onProgress?.({ done: ++done, total: plan.length });
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, options.out);
    return { mergedTensors: pairs.size, bytes: written };
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  } finally {
    await base.close();
  }
}
