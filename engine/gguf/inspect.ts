/**
 * What a GGUF says about itself, from its header alone (no weights are read, so a 5 GB model is
 * described in milliseconds): architecture, name, parameter count, quantization, context,
 * whether it has a chat template, and whether svc can train it (with a one-line reason if not).
 */
import { stat } from 'node:fs/promises';
import { isTrainableArchitecture } from '../model/config.js';
import type { GgufHeader, GgufTensorInfo, GgufValue } from './format.js';
import { ggmlTypeName, isSupportedGgmlType, UnsupportedTensorTypeError } from './ggml-types.js';
import { configFromMetadata, UnsupportedArchitectureError } from './model-config.js';
import { readGgufHeader } from './reader.js';

export interface ModelFacts {
  architecture: string;
  name?: string;
  /** Sum of all tensors' element counts. */
  parameters: number;
  /** llama.cpp's file type name (e.g. "Q4_K_M", "F16"), else the tensor type holding most bytes. */
  quantization: string;
  contextLength?: number;
  sizeBytes: number;
  hasChatTemplate: boolean;
  trainable: boolean;
  notTrainableReason?: string;
}

/** llama.cpp's LLAMA_FTYPE names, the file-level quantization general.file_type holds. */
const FILE_TYPES: Readonly<Record<number, string>> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  19: 'IQ2_XXS',
  20: 'IQ2_XS',
  21: 'Q2_K_S',
  22: 'IQ3_XS',
  23: 'IQ3_XXS',
  24: 'IQ1_S',
  25: 'IQ4_NL',
  26: 'IQ3_S',
  27: 'IQ3_M',
  28: 'IQ2_S',
  29: 'IQ2_M',
  30: 'IQ4_XS',
  31: 'IQ1_M',
  32: 'BF16',
  36: 'TQ1_0',
  37: 'TQ2_0',
  38: 'MXFP4_MOE',
  39: 'NVFP4',
  40: 'Q1_0',
  41: 'Q2_0',
};

const elements = (t: GgufTensorInfo): number => t.dims.reduce((a, b) => a * b, 1);

function valueAt(metadata: Map<string, GgufValue>, key: string): GgufValue['value'] | undefined {
  return metadata.get(key)?.value;
}

/** The type holding most bytes (unknown types count by elements, as their size is unknown). */
function dominantType(tensors: GgufTensorInfo[]): string {
  const totals = new Map<string, number>();
  for (const t of tensors) {
    const name = ggmlTypeName(t.type);
    totals.set(name, (totals.get(name) ?? 0) + (Number.isFinite(t.byteLength) ? t.byteLength : elements(t)));
  }
  return [...totals].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'unknown';
}

function notTrainableReason(architecture: string, header: GgufHeader): string | undefined {
  if (!isTrainableArchitecture(architecture)) return new UnsupportedArchitectureError(architecture).message;
  if (header.tensors.length === 0) return 'the file has no weights (a vocabulary-only GGUF)';
  const unsupported = header.tensors.find((t) => !isSupportedGgmlType(t.type));
  if (unsupported) return new UnsupportedTensorTypeError(unsupported.name, unsupported.type).message;
  try {
    configFromMetadata(
      header.metadata,
      header.tensors.map((t) => t.name),
    );
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).split('\n')[0];
  }
  return undefined;
}

export function describeGguf(header: GgufHeader, sizeBytes: number): ModelFacts {
  const architecture = valueAt(header.metadata, 'general.architecture');
  if (typeof architecture !== 'string') throw new Error('the header has no general.architecture: not a model file');
  // The header alone can look whole in a file cut off in the weights; say so now, not at load.
  const end = header.tensors.reduce((max, t) => Math.max(max, t.offset + (Number.isFinite(t.byteLength) ? t.byteLength : 0)), 0);
  if (end > sizeBytes) throw new Error(`the file is truncated: its tensors need ${end} bytes, it has ${sizeBytes}`);
  const name = valueAt(header.metadata, 'general.name');
  const fileType = valueAt(header.metadata, 'general.file_type');
  const contextLength = valueAt(header.metadata, `${architecture}.context_length`);
  // Absent facts are absent keys, not undefined values (callers compare and serialise these).
  const facts: ModelFacts = {
    architecture,
    ...(typeof name === 'string' ? { name } : {}),
    parameters: header.tensors.reduce((sum, t) => sum + elements(t), 0),
    quantization: (typeof fileType === 'number' && FILE_TYPES[fileType]) || dominantType(header.tensors),
    ...(typeof contextLength === 'number' ? { contextLength } : {}),
    sizeBytes,
    hasChatTemplate: header.metadata.has('tokenizer.chat_template'),
    trainable: false,
  };
  const reason = notTrainableReason(architecture, header);
  return reason ? { ...facts, notTrainableReason: reason } : { ...facts, trainable: true };
}

export async function inspectGguf(path: string): Promise<ModelFacts> {
  const [header, { size }] = await Promise.all([readGgufHeader(path), stat(path)]);
  return describeGguf(header, size);
}
