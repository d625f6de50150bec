/**
 * Base model <-> GGUF: the llama.* metadata, the tokenizer, and the tensor layout conversion.
 *
 * Layout: ggml lists ne0 (the row length) first. llama.cpp's linear weights have ne0 = input
 * dimension, i.e. rows are output units (PyTorch's [out, in]); our tfjs weights are [in, out], so
 * 2-D linear weights are transposed on the way out and back on the way in. The token embedding is
 * [vocab, d] in both worlds (one row per token) and is not transposed.
 */
import { stat } from 'node:fs/promises';
import { tf } from '../backend.js';
import { isLlamaFamily, type ModelConfig } from '../model/config.js';
import type { LoadProgress } from '../backends/types.js';
import { transpose2d } from '../model/matrix.js';
import { isLinearWeight, weightShapes, type ModelWeights } from '../model/weights.js';
import { f32, str, u32, type GgufFile, type GgufTensor, type GgufTensorInfo, type GgufValue } from './format.js';
import { configFromMetadata } from './model-config.js';
import { ggmlByteLength } from './ggml-types.js';
import { openGgufTensors, readGgufFile, readGgufHeader } from './reader.js';
import { tokenizerMetadata } from './vocab.js';
import { writeGgufFile } from './writer.js';

export { transpose2d };

/** tfjs tensor -> GGUF tensor. `isLinear` marks [in, out] weights that ggml stores as [out][in]. */
export function toGgufTensor(name: string, tensor: tf.Tensor, isLinear: boolean): GgufTensor {
  const data = tensor.dataSync() as Float32Array;
  if (tensor.rank === 1) return { name, dims: [tensor.shape[0]], data: Float32Array.from(data) };
  const [rows, cols] = tensor.shape as [number, number];
  if (!isLinear) return { name, dims: [cols, rows], data: Float32Array.from(data) };
  return { name, dims: [rows, cols], data: transpose2d(data, rows, cols) };
}

/** GGUF tensor -> tfjs tensor with the given tfjs shape (inverse of toGgufTensor). */
export function fromGgufTensor(tensor: GgufTensor, shape: number[], isLinear: boolean): tf.Tensor {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count !== tensor.data.length) throw new Error(`tensor ${tensor.name} has ${tensor.data.length} values, expected shape ${shape}`);
  if (shape.length === 2 && isLinear) return tf.tensor(transpose2d(tensor.data, shape[1], shape[0]), shape);
  return tf.tensor(tensor.data, shape);
}

/** The metadata llama.cpp, transformers and configFromMetadata read for `config`'s architecture. */
export function modelMetadata(config: ModelConfig): Array<[string, GgufValue]> {
  const arch = config.architecture;
  const entries: Array<[string, GgufValue]> = [
    ['general.architecture', str(arch)],
    ['general.type', str('model')],
    ['general.name', str(config.name)],
    ['general.license', str('MIT')],
    [`${arch}.vocab_size`, u32(config.vocabSize)],
    [`${arch}.context_length`, u32(config.contextLength)],
    [`${arch}.embedding_length`, u32(config.embeddingLength)],
    [`${arch}.block_count`, u32(config.blockCount)],
    [`${arch}.feed_forward_length`, u32(config.feedForwardLength)],
    [`${arch}.attention.head_count`, u32(config.headCount)],
    [`${arch}.attention.head_count_kv`, u32(config.headCountKv)],
    [`${arch}.attention.key_length`, u32(config.headDim)],
    [`${arch}.attention.value_length`, u32(config.headDim)],
    [`${arch}.attention.layer_norm_rms_epsilon`, f32(config.rmsNormEpsilon)],
    [`${arch}.rope.dimension_count`, u32(config.headDim)],
    [`${arch}.rope.freq_base`, f32(config.ropeFreqBase)],
  ];
  if (config.ropeFreqScale !== 1) entries.push([`${arch}.rope.scaling.type`, str('linear')], [`${arch}.rope.scaling.factor`, f32(1 / config.ropeFreqScale)]);
  return entries;
}

export function modelToGguf(config: ModelConfig, weights: ModelWeights): GgufFile {
  const metadata = new Map<string, GgufValue>([...modelMetadata(config), ...tokenizerMetadata()]);
  const tensors = weightShapes(config).map(([name]) => toGgufTensor(name, weights[name], isLinearWeight(name)));
  return { metadata, tensors };
}

export async function saveModelGguf(path: string, config: ModelConfig, weights: ModelWeights): Promise<void> {
  await writeGgufFile(path, modelToGguf(config, weights));
}

/** The model's configuration from a GGUF's metadata and tensor names (a whole file or just its header). */
export function configFromGguf(file: Pick<GgufFile, 'metadata'> & { tensors: ReadonlyArray<{ name: string }> }): ModelConfig {
  return configFromMetadata(
    file.metadata,
    file.tensors.map((t) => t.name),
  );
}

export interface LoadedModel {
  config: ModelConfig;
  weights: ModelWeights;
}

export function modelFromGguf(file: GgufFile): LoadedModel {
  const config = configFromGguf(file);
  const byName = new Map(file.tensors.map((t) => [t.name, t]));
  const weights: ModelWeights = {};
  for (const [name, shape] of weightShapes(config)) {
    const tensor = byName.get(name);
    if (!tensor) throw new Error(`GGUF is missing tensor ${name}`);
    weights[name] = fromGgufTensor(tensor, shape, isLinearWeight(name));
  }
  return { config, weights };
}

/** The model's configuration from its GGUF header (no weights are read). */
export async function readModelConfig(path: string): Promise<ModelConfig> {
  return configFromGguf(await readGgufHeader(path));
}

/**
 * The configuration of a base model about to be trained, from its header alone: the architecture
 * must be trainable (UnsupportedArchitectureError), and every weight it needs present with the
 * shape the metadata implies and a type svc dequantises (UnsupportedTensorTypeError), so a bad
 * file fails in a line before anything is loaded.
 */
export async function readTrainableModelConfig(path: string): Promise<ModelConfig> {
  const header = await readGgufHeader(path);
  const config = { ...configFromGguf(header), parameterCount: header.tensors.reduce((sum, t) => sum + t.dims.reduce((a, b) => a * b, 1), 0) };
  // The llama family's every weight is known here; transformers checks the others as it loads them.
  checkWeightInfos(header.tensors, isLlamaFamily(config.architecture) ? weightShapes(config) : [], (await stat(path)).size);
  return config;
}

/** Checks every weight `config` needs (see readTrainableModelConfig); returns the tensor infos by name. */
function checkWeightInfos(
  tensors: readonly GgufTensorInfo[],
  shapes: ReadonlyArray<readonly [string, readonly number[]]>,
  fileSize?: number,
): Map<string, GgufTensorInfo> {
  const byName = new Map(tensors.map((t) => [t.name, t]));
  for (const [name, shape] of shapes) {
    const info = byName.get(name);
    if (!info) throw new Error(`GGUF is missing tensor ${name}`);
    const count = info.dims.reduce((a, b) => a * b, 1);
    if (count !== shape.reduce((a, b) => a * b, 1)) throw new Error(`tensor ${name} has dims [${info.dims}], which do not fit the metadata's shape [${shape}]`);
    ggmlByteLength(info.type, count, name);
  }
  const end = Math.max(...tensors.map((t) => t.offset + t.byteLength));
  if (fileSize !== undefined && end > fileSize) {
    const cut = tensors.find((t) => t.offset + t.byteLength > fileSize)!;
    throw new Error(`truncated GGUF: tensor ${cut.name} needs bytes up to ${cut.offset + cut.byteLength} but the file has ${fileSize}`);
  }
  return byName;
}

/** Loads a base model into tfjs tensors (dequantised to float32); the starting point of fine-tunes. */
export async function loadModelGguf(path: string): Promise<LoadedModel> {
  return modelFromGguf(await readGgufFile(path));
}

/**
 * Reads the weights `config` names from a GGUF into tfjs tensors, tensor by tensor (only one
 * tensor's file bytes are in memory at a time), reporting progress in float32 bytes. Every
 * tensor's presence and type are checked before any data is read, so an unsupported type fails
 * before minutes of loading.
 */
export async function openModelWeights(path: string, config: ModelConfig, onProgress?: (progress: LoadProgress) => void): Promise<ModelWeights> {
  const reader = await openGgufTensors(path);
  try {
    const byName = checkWeightInfos(reader.header.tensors, weightShapes(config));
    const shapes = weightShapes(config);
    const totalBytes = shapes.reduce((sum, [, shape]) => sum + 4 * shape.reduce((a, b) => a * b, 1), 0);
    let loadedBytes = 0;
    const weights: ModelWeights = {};
    for (const [name, shape] of shapes) {
      const data = await reader.readF32(name);
      weights[name] = fromGgufTensor({ name, dims: byName.get(name)!.dims, data }, shape, isLinearWeight(name));
      loadedBytes += 4 * data.length;
      onProgress?.({ loadedBytes, totalBytes, tensor: name });
    }
    return weights;
  } finally {
    await reader.close();
  }
}
