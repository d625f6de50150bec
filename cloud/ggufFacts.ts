/**
 * What a GGUF says about itself, from its header alone (no weights are read, so a 5 GB model is
 * described in milliseconds): architecture, name, parameter count, quantization, context,
 * whether it has a chat template, and whether svc can train it (with a one-line reason if not).
 *
 * Interim: the contract is engine/gguf/inspect.ts's `inspectGguf(path): Promise<ModelFacts>`,
 * which the engine is getting; until it lands, registration (cloud) and discovery (CLI) read
 * headers here. When it lands, this file becomes a re-export of it.
 */
import { open, type FileHandle } from "node:fs/promises";
import { GgufValueType, type GgufValue } from "../engine/gguf/format.js";
import { configFromMetadata } from "../engine/gguf/model-config.js";
import { isTrainableArchitecture, TRAINABLE_ARCHITECTURES } from "../engine/model/config.js";

export interface ModelFacts {
  architecture: string;
  name?: string;
  parameters: number;
  /** e.g. "Q4_K_M", "Q8_0", "F16". */
  quantization: string;
  contextLength?: number;
  sizeBytes: number;
  hasChatTemplate: boolean;
  trainable: boolean;
  notTrainableReason?: string;
}

const GGUF_MAGIC = "GGUF";
/** Beyond these a header is corrupt, not large (the biggest vocabularies have ~260k tokens). */
const MAX_STRING_BYTES = 64 * 1024 * 1024;
const MAX_ITEMS = 16 * 1024 * 1024;
const MAX_DIMS = 8;
const CHUNK = 1 << 20;

/** llama.cpp's LLAMA_FTYPE, the file-level quantization named in general.file_type. */
const FILE_TYPES: Record<number, string> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L",
  14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
  23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16",
  36: "TQ1_0", 37: "TQ2_0",
};

/** ggml tensor types: [name, bytes per block, elements per block] (block size only where training needs it). */
const TENSOR_TYPES: Record<number, [string, number?, number?]> = {
  0: ["F32", 4, 1], 1: ["F16", 2, 1], 2: ["Q4_0", 18, 32], 3: ["Q4_1", 20, 32], 6: ["Q5_0", 22, 32], 7: ["Q5_1", 24, 32], 8: ["Q8_0", 34, 32],
  9: ["Q8_1"], 10: ["Q2_K", 84, 256], 11: ["Q3_K", 110, 256], 12: ["Q4_K", 144, 256], 13: ["Q5_K", 176, 256], 14: ["Q6_K", 210, 256],
  15: ["Q8_K"], 16: ["IQ2_XXS"], 17: ["IQ2_XS"], 18: ["IQ3_XXS"], 19: ["IQ1_S"], 20: ["IQ4_NL"], 21: ["IQ3_S"], 22: ["IQ2_S"],
  23: ["IQ4_XS"], 24: ["I8"], 25: ["I16"], 26: ["I32"], 27: ["I64"], 28: ["F64"], 29: ["IQ1_M"], 30: ["BF16", 2, 1], 34: ["TQ1_0"], 35: ["TQ2_0"],
};

/** The tensor types the training backends dequantise (engine/backends/torch's GGUF reader). */
const TRAINABLE_TENSOR_TYPES = new Set(["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"]);

export async function inspectGguf(path: string): Promise<ModelFacts> {
  const handle = await open(path, "r");
  try {
    const sizeBytes = (await handle.stat()).size;
    const header = await readHeader(new HeaderSource(handle, sizeBytes));
    return describe(header, sizeBytes);
  } finally {
    await handle.close();
  }
}

interface TensorInfo {
  name: string;
  dims: number[];
  type: number;
  offset: number;
}

interface Header {
  metadata: Map<string, GgufValue>;
  tensors: TensorInfo[];
  dataStart: number;
}

function describe({ metadata, tensors, dataStart }: Header, sizeBytes: number): ModelFacts {
  const architecture = stringValue(metadata, "general.architecture");
  if (!architecture) throw new Error("the header has no general.architecture: not a model file");
  const elements = (t: TensorInfo) => t.dims.reduce((a, b) => a * b, 1);
  checkDataPresent(tensors, dataStart, sizeBytes, elements);
  const typeNames = tensors.map((t) => TENSOR_TYPES[t.type]?.[0] ?? `type ${t.type}`);
  const fileType = numberValue(metadata, "general.file_type");
  const quantization = (fileType !== undefined && FILE_TYPES[fileType]) || dominantType(tensors, typeNames, elements);
  const facts: ModelFacts = {
    architecture,
    name: stringValue(metadata, "general.name"),
    parameters: tensors.reduce((sum, t) => sum + elements(t), 0),
    quantization,
    contextLength: numberValue(metadata, `${architecture}.context_length`),
    sizeBytes,
    hasChatTemplate: metadata.has("tokenizer.chat_template"),
    trainable: false,
  };
  const reason = notTrainableReason(architecture, metadata, tensors, typeNames);
  return reason ? { ...facts, notTrainableReason: reason } : { ...facts, trainable: true };
}

function notTrainableReason(architecture: string, metadata: Map<string, GgufValue>, tensors: TensorInfo[], typeNames: string[]): string | undefined {
  if (!isTrainableArchitecture(architecture)) return `architecture ${architecture}: svc trains ${TRAINABLE_ARCHITECTURES.join(", ")} models`;
  if (tensors.length === 0) return "the file has no weights (a vocabulary-only GGUF)";
  const unsupported = [...new Set(typeNames.filter((t) => !TRAINABLE_TENSOR_TYPES.has(t)))];
  if (unsupported.length) return `tensor type ${unsupported.join(", ")} cannot be read for training (svc reads ${[...TRAINABLE_TENSOR_TYPES].join(", ")})`;
  try {
    configFromMetadata(metadata, tensors.map((t) => t.name));
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).split("\n")[0];
  }
  return undefined;
}

/** The type holding most of the weights, for files that do not name their quantization. */
function dominantType(tensors: TensorInfo[], typeNames: string[], elements: (t: TensorInfo) => number): string {
  const totals = new Map<string, number>();
  tensors.forEach((t, i) => totals.set(typeNames[i], (totals.get(typeNames[i]) ?? 0) + elements(t)));
  return [...totals].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "unknown";
}

/** A file cut short after its header still fails here: its last tensor must end inside the file. */
function checkDataPresent(tensors: TensorInfo[], dataStart: number, sizeBytes: number, elements: (t: TensorInfo) => number): void {
  let end = 0;
  for (const t of tensors) {
    const [, blockBytes, blockElements] = TENSOR_TYPES[t.type] ?? [];
    end = Math.max(end, dataStart + t.offset + (blockBytes && blockElements ? Math.ceil(elements(t) / blockElements) * blockBytes : 0));
  }
  if (end > sizeBytes) throw new Error(`the file is truncated: its tensors need ${end} bytes, it has ${sizeBytes}`);
}

async function readHeader(source: HeaderSource): Promise<Header> {
  const magic = (await source.bytes(4)).toString("latin1");
  if (magic !== GGUF_MAGIC) throw new Error("not a GGUF file (it does not start with GGUF)");
  const version = await source.u32();
  if (version !== 2 && version !== 3) throw new Error(`GGUF version ${version} is not supported (2 and 3 are)`);
  const tensorCount = await source.count();
  const kvCount = await source.count();
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = await source.string();
    metadata.set(key, await readValue(source, await source.u32()));
  }
  const tensors: TensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = await source.string();
    const nDims = await source.u32();
    if (nDims > MAX_DIMS) throw new Error(`tensor ${name} has ${nDims} dimensions: the header is corrupt`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(await source.u64());
    tensors.push({ name, dims, type: await source.u32(), offset: await source.u64() });
  }
  const alignment = numberValue(metadata, "general.alignment") ?? 32;
  return { metadata, tensors, dataStart: Math.ceil(source.position / alignment) * alignment };
}

async function readValue(source: HeaderSource, type: number): Promise<GgufValue> {
  if (type === GgufValueType.ARRAY) {
    const itemType = await source.u32();
    const count = await source.count();
    const items: unknown[] = [];
    // Vocabularies are arrays of 100k+ strings: items already in the read window are decoded
    // without a promise each (an await per token made a Llama 3 header take seconds).
    for (let i = 0; i < count; i++) {
      const quick = itemType === GgufValueType.ARRAY ? undefined : source.scalarInWindow(itemType);
      items.push(quick !== undefined ? quick : (await readValue(source, itemType)).value);
    }
    return { type, itemType, value: items } as GgufValue;
  }
  return { type, value: await readScalar(source, type) } as GgufValue;
}

async function readScalar(source: HeaderSource, type: number): Promise<number | bigint | boolean | string> {
  switch (type) {
    case GgufValueType.UINT8: return (await source.bytes(1)).readUInt8(0);
    case GgufValueType.INT8: return (await source.bytes(1)).readInt8(0);
    case GgufValueType.UINT16: return (await source.bytes(2)).readUInt16LE(0);
    case GgufValueType.INT16: return (await source.bytes(2)).readInt16LE(0);
    case GgufValueType.UINT32: return source.u32();
    case GgufValueType.INT32: return (await source.bytes(4)).readInt32LE(0);
    case GgufValueType.FLOAT32: return (await source.bytes(4)).readFloatLE(0);
    case GgufValueType.BOOL: return (await source.bytes(1))[0] !== 0;
    case GgufValueType.STRING: return source.string();
    case GgufValueType.UINT64: return (await source.bytes(8)).readBigUInt64LE(0);
    case GgufValueType.INT64: return (await source.bytes(8)).readBigInt64LE(0);
    case GgufValueType.FLOAT64: return (await source.bytes(8)).readDoubleLE(0);
    default: throw new Error(`unknown GGUF value type ${type}: the header is corrupt`);
  }
}

const stringValue = (metadata: Map<string, GgufValue>, key: string): string | undefined => {
  const v = metadata.get(key);
  return v && typeof v.value === "string" ? v.value : undefined;
};

const numberValue = (metadata: Map<string, GgufValue>, key: string): number | undefined => {
  const v = metadata.get(key);
  if (v && typeof v.value === "number") return v.value;
  return v && typeof v.value === "bigint" ? Number(v.value) : undefined;
};

const SCALAR_SIZES: Record<number, number> = {
  [GgufValueType.UINT8]: 1, [GgufValueType.INT8]: 1, [GgufValueType.UINT16]: 2, [GgufValueType.INT16]: 2, [GgufValueType.UINT32]: 4,
  [GgufValueType.INT32]: 4, [GgufValueType.FLOAT32]: 4, [GgufValueType.BOOL]: 1, [GgufValueType.UINT64]: 8, [GgufValueType.INT64]: 8,
  [GgufValueType.FLOAT64]: 8,
};

/** Sequential reads through a 1 MiB window, so a header of any size costs few system calls. */
class HeaderSource {
  position = 0;
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(private readonly handle: FileHandle, private readonly size: number) {}

  async bytes(length: number): Promise<Buffer> {
    if (this.position + length > this.size) throw new Error(`the file is truncated: its header needs more than its ${this.size} bytes`);
    const offset = this.position - this.windowStart;
    if (offset < 0 || offset + length > this.window.length) {
      this.window = Buffer.alloc(Math.max(CHUNK, length));
      const { bytesRead } = await this.handle.read(this.window, 0, this.window.length, this.position);
      this.window = this.window.subarray(0, bytesRead);
      this.windowStart = this.position;
    }
    const start = this.position - this.windowStart;
    this.position += length;
    return this.window.subarray(start, start + length);
  }

  /**
   * The scalar at the current position when the window already holds all of it (and then moves
   * past it); undefined when it does not, and the caller reads it the slow way.
   */
  scalarInWindow(type: number): number | bigint | boolean | string | undefined {
    const at = this.position - this.windowStart;
    const available = this.window.length - at;
    if (at < 0) return undefined;
    if (type === GgufValueType.STRING) {
      if (available < 8) return undefined;
      const length = Number(this.window.readBigUInt64LE(at));
      if (length > MAX_STRING_BYTES || available < 8 + length) return undefined;
      this.position += 8 + length;
      return this.window.toString("utf8", at + 8, at + 8 + length);
    }
    const size = SCALAR_SIZES[type];
    if (size === undefined || available < size) return undefined;
    this.position += size;
    const w = this.window;
    switch (type) {
      case GgufValueType.UINT8: return w.readUInt8(at);
      case GgufValueType.INT8: return w.readInt8(at);
      case GgufValueType.UINT16: return w.readUInt16LE(at);
      case GgufValueType.INT16: return w.readInt16LE(at);
      case GgufValueType.UINT32: return w.readUInt32LE(at);
      case GgufValueType.INT32: return w.readInt32LE(at);
      case GgufValueType.FLOAT32: return w.readFloatLE(at);
      case GgufValueType.BOOL: return w[at] !== 0;
      case GgufValueType.UINT64: return w.readBigUInt64LE(at);
      case GgufValueType.INT64: return w.readBigInt64LE(at);
      default: return w.readDoubleLE(at);
    }
  }

  async u32(): Promise<number> {
    return (await this.bytes(4)).readUInt32LE(0);
  }

  async u64(): Promise<number> {
    const value = (await this.bytes(8)).readBigUInt64LE(0);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error("a size in the header is out of range: the header is corrupt");
    return Number(value);
  }

  /** A u64 count of things that must fit in memory. */
  async count(): Promise<number> {
    const n = await this.u64();
    if (n > MAX_ITEMS) throw new Error(`a count of ${n} in the header is implausible: the header is corrupt`);
    return n;
  }

  async string(): Promise<string> {
    const length = await this.u64();
    if (length > MAX_STRING_BYTES) throw new Error(`a string of ${length} bytes in the header is implausible: the header is corrupt`);
    return (await this.bytes(length)).toString("utf8");
  }
}
