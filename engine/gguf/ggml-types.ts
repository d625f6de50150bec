/**
 * ggml tensor types: every name (so an error about a type we cannot train says which one it is,
 * e.g. IQ2_XS), and the block geometry of the ones svc dequantises. Numbers and sizes follow
 * llama.cpp's gguf-py/gguf/constants.py (GGMLQuantizationType, GGML_QUANT_SIZES).
 */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q8_0 = 8,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  BF16 = 30,
}

/** All ggml types by number: [name, elements per block, bytes per block] (GGML_QUANT_SIZES). */
const GGML_TYPES: Readonly<Record<number, readonly [string, number, number]>> = {
  0: ['F32', 1, 4],
  1: ['F16', 1, 2],
  2: ['Q4_0', 32, 18],
  3: ['Q4_1', 32, 20],
  6: ['Q5_0', 32, 22],
  7: ['Q5_1', 32, 24],
  8: ['Q8_0', 32, 34],
  9: ['Q8_1', 32, 40],
  10: ['Q2_K', 256, 84],
  11: ['Q3_K', 256, 110],
  12: ['Q4_K', 256, 144],
  13: ['Q5_K', 256, 176],
  14: ['Q6_K', 256, 210],
  15: ['Q8_K', 256, 292],
  16: ['IQ2_XXS', 256, 66],
  17: ['IQ2_XS', 256, 74],
  18: ['IQ3_XXS', 256, 98],
  19: ['IQ1_S', 256, 50],
  20: ['IQ4_NL', 32, 18],
  21: ['IQ3_S', 256, 110],
  22: ['IQ2_S', 256, 82],
  23: ['IQ4_XS', 256, 136],
  24: ['I8', 1, 1],
  25: ['I16', 1, 2],
  26: ['I32', 1, 4],
  27: ['I64', 1, 8],
  28: ['F64', 1, 8],
  29: ['IQ1_M', 256, 56],
  30: ['BF16', 1, 2],
  34: ['TQ1_0', 256, 54],
  35: ['TQ2_0', 256, 66],
  39: ['MXFP4', 32, 17],
  40: ['NVFP4', 64, 36],
  41: ['Q1_0', 128, 18],
  42: ['Q2_0', 64, 18],
};

export interface GgmlTypeInfo {
  type: number;
  name: string;
  /** Elements one block holds (1 for plain floats). */
  blockElements: number;
  /** Bytes one block takes in the file. */
  blockBytes: number;
}

/** The types svc dequantises (and quantises, for writing test models). */
export const SUPPORTED_GGML_TYPES: readonly GgmlType[] = [
  GgmlType.F32,
  GgmlType.F16,
  GgmlType.BF16,
  GgmlType.Q8_0,
  GgmlType.Q4_0,
  GgmlType.Q4_K,
  GgmlType.Q5_K,
  GgmlType.Q6_K,
];
const SUPPORTED: ReadonlySet<number> = new Set(SUPPORTED_GGML_TYPES);

/** Geometry of any known ggml type, supported or not (a header's byte lengths need it); undefined if unknown. */
export function knownGgmlType(type: number): GgmlTypeInfo | undefined {
  const entry = GGML_TYPES[type];
  return entry && { type, name: entry[0], blockElements: entry[1], blockBytes: entry[2] };
}

/** "IQ2_XS" for 17, "type 99" for numbers ggml does not (yet) have. */
export function ggmlTypeName(type: number): string {
  return GGML_TYPES[type]?.[0] ?? `type ${type}`;
}

export function isSupportedGgmlType(type: number): type is GgmlType {
  return SUPPORTED.has(type);
}

export class UnsupportedTensorTypeError extends Error {
  readonly code = 'unsupported_tensor_type';
  constructor(
    readonly tensorName: string,
    readonly tensorType: number,
  ) {
    super(`tensor ${tensorName} has ggml type ${ggmlTypeName(tensorType)}; svc reads ${SUPPORTED_GGML_TYPES.map(ggmlTypeName).join(', ')}`);
  }
}

/** Geometry of a supported type; `tensorName` only makes the error readable. */
export function ggmlTypeInfo(type: number, tensorName = '(unnamed)'): GgmlTypeInfo {
  const info = knownGgmlType(type);
  if (!info || !SUPPORTED.has(type)) throw new UnsupportedTensorTypeError(tensorName, type);
  return info;
}

/** Bytes `count` elements take; count must fill whole blocks, as ggml requires of each row. */
export function ggmlByteLength(type: number, count: number, tensorName = '(unnamed)'): number {
  const { blockElements, blockBytes, name } = ggmlTypeInfo(type, tensorName);
  if (count % blockElements !== 0) throw new Error(`tensor ${tensorName}: ${count} elements are not a whole number of ${name} blocks of ${blockElements}`);
  return (count / blockElements) * blockBytes;
}
