/**
 * GGUF v3 constants and the in-memory shape of a file, shared by the writer and the reader.
 * Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
 */
export const GGUF_MAGIC = 0x46554747; // "GGUF" little-endian
export const GGUF_VERSION = 3;
export const GGUF_ALIGNMENT = 32;

export enum GgufValueType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/** ggml tensor type F32, the default a tensor is written as (engine/gguf/ggml-types.ts has them all). */
export const GGML_TYPE_F32 = 0;

/** A metadata value with its explicit GGUF type, since JS numbers do not say u32 vs f32. */
export type GgufValue =
  | {
      type:
        | GgufValueType.UINT32
        | GgufValueType.INT32
        | GgufValueType.FLOAT32
        | GgufValueType.UINT8
        | GgufValueType.INT8
        | GgufValueType.UINT16
        | GgufValueType.INT16
        | GgufValueType.FLOAT64;
      value: number;
    }
  | { type: GgufValueType.UINT64 | GgufValueType.INT64; value: bigint }
  | { type: GgufValueType.BOOL; value: boolean }
  | { type: GgufValueType.STRING; value: string }
  | { type: GgufValueType.ARRAY; itemType: GgufValueType.STRING; value: string[] }
  | {
      type: GgufValueType.ARRAY;
      itemType:
        | GgufValueType.INT32
        | GgufValueType.UINT32
        | GgufValueType.FLOAT32
        | GgufValueType.UINT8
        | GgufValueType.INT8
        | GgufValueType.UINT16
        | GgufValueType.INT16
        | GgufValueType.FLOAT64;
      value: number[];
    }
  | { type: GgufValueType.ARRAY; itemType: GgufValueType.UINT64 | GgufValueType.INT64; value: bigint[] }
  | { type: GgufValueType.ARRAY; itemType: GgufValueType.BOOL; value: boolean[] };

export interface GgufTensor {
  name: string;
  /** ggml dims, ne0 first (ne0 is the fastest-varying, i.e. the row length). */
  dims: number[];
  /** Row-major data with ne0 fastest, always F32 in memory (read tensors are dequantised). */
  data: Float32Array;
  /**
   * ggml type the data is stored as in the file (GgmlType in ggml-types.ts); F32 when absent.
   * The reader sets it only for non-F32 tensors, so writing a read file keeps its types.
   */
  type?: number;
}

/** Where one tensor lives in a file, as its header says; the data itself is not read. */
export interface GgufTensorInfo {
  name: string;
  /** ggml dims, ne0 first. */
  dims: number[];
  /** ggml type number (any ggml type; only some can be dequantised). */
  type: number;
  /** Absolute file offset of the tensor's first byte. */
  offset: number;
  /** Bytes the data takes (NaN for a type ggml-types.ts does not know). */
  byteLength: number;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** Absolute offset of the tensor data section. */
  dataOffset: number;
}

export interface GgufFile {
  metadata: Map<string, GgufValue>;
  tensors: GgufTensor[];
}

export const u32 = (value: number): GgufValue => ({ type: GgufValueType.UINT32, value });
export const f32 = (value: number): GgufValue => ({ type: GgufValueType.FLOAT32, value });
export const str = (value: string): GgufValue => ({ type: GgufValueType.STRING, value });
export const bool = (value: boolean): GgufValue => ({ type: GgufValueType.BOOL, value });
export const strArray = (value: string[]): GgufValue => ({ type: GgufValueType.ARRAY, itemType: GgufValueType.STRING, value });
export const i32Array = (value: number[]): GgufValue => ({ type: GgufValueType.ARRAY, itemType: GgufValueType.INT32, value });
export const f32Array = (value: number[]): GgufValue => ({ type: GgufValueType.ARRAY, itemType: GgufValueType.FLOAT32, value });
