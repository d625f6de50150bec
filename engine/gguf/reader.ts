/**
 * Parses GGUF v3 files with F32 tensors (the ones engine/gguf/writer.ts produces). Other tensor
 * types (quantised models registered by users) are rejected with a clear error: only our own
 * base models are fine-tuned, any GGUF can still be served by llama.cpp.
 */
import { readFile } from 'node:fs/promises';
import { GGML_TYPE_F32, GGUF_ALIGNMENT, GGUF_MAGIC, GgufValueType, type GgufFile, type GgufTensor, type GgufValue } from './format.js';

class ByteSource {
  offset = 0;
  constructor(private readonly buffer: Buffer) {}

  u8(): number { return this.buffer.readUInt8(this.offset++); }
  u32(): number { const v = this.buffer.readUInt32LE(this.offset); this.offset += 4; return v; }
  u64(): bigint { const v = this.buffer.readBigUInt64LE(this.offset); this.offset += 8; return v; }
  safeU64(): number {
    const v = this.u64();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('GGUF value too large');
    return Number(v);
  }
  string(): string {
    const length = this.safeU64();
    const s = this.buffer.toString('utf8', this.offset, this.offset + length);
    this.offset += length;
    return s;
  }
  scalar(type: GgufValueType): number | bigint | boolean | string {
    const b = this.buffer;
    let v: number | bigint | boolean | string;
    switch (type) {
      case GgufValueType.UINT8: v = b.readUInt8(this.offset); this.offset += 1; return v;
      case GgufValueType.INT8: v = b.readInt8(this.offset); this.offset += 1; return v;
      case GgufValueType.UINT16: v = b.readUInt16LE(this.offset); this.offset += 2; return v;
      case GgufValueType.INT16: v = b.readInt16LE(this.offset); this.offset += 2; return v;
      case GgufValueType.UINT32: return this.u32();
      case GgufValueType.INT32: v = b.readInt32LE(this.offset); this.offset += 4; return v;
      case GgufValueType.FLOAT32: v = b.readFloatLE(this.offset); this.offset += 4; return v;
      case GgufValueType.FLOAT64: v = b.readDoubleLE(this.offset); this.offset += 8; return v;
      case GgufValueType.UINT64: return this.u64();
      case GgufValueType.INT64: v = b.readBigInt64LE(this.offset); this.offset += 8; return v;
      case GgufValueType.BOOL: return this.u8() !== 0;
      case GgufValueType.STRING: return this.string();
      default: throw new Error(`unsupported GGUF value type ${type}`);
    }
  }
}

function readValue(source: ByteSource): GgufValue {
  const type = source.u32() as GgufValueType;
  if (type === GgufValueType.ARRAY) {
    const itemType = source.u32() as GgufValueType;
    const count = source.safeU64();
    const items: unknown[] = [];
    for (let i = 0; i < count; i++) items.push(source.scalar(itemType));
    return { type, itemType, value: items } as GgufValue;
  }
  return { type, value: source.scalar(type) } as GgufValue;
}

export function decodeGguf(buffer: Buffer): GgufFile {
  const source = new ByteSource(buffer);
  if (source.u32() !== GGUF_MAGIC) throw new Error('not a GGUF file (bad magic)');
  const version = source.u32();
  if (version !== 3) throw new Error(`unsupported GGUF version ${version}`);
  const tensorCount = source.safeU64();
  const kvCount = source.safeU64();
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = source.string();
    metadata.set(key, readValue(source));
  }
  const alignmentValue = metadata.get('general.alignment');
  const alignment = alignmentValue && typeof alignmentValue.value === 'number' ? alignmentValue.value : GGUF_ALIGNMENT;
  const infos: Array<{ name: string; dims: number[]; type: number; offset: number }> = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = source.string();
    const nDims = source.u32();
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(source.safeU64());
    const type = source.u32();
    infos.push({ name, dims, type, offset: source.safeU64() });
  }
  const dataStart = Math.ceil(source.offset / alignment) * alignment;
  const tensors: GgufTensor[] = infos.map((info) => {
    if (info.type !== GGML_TYPE_F32) throw new Error(`tensor ${info.name} has ggml type ${info.type}; only F32 GGUF files can be fine-tuned`);
    const count = info.dims.reduce((a, b) => a * b, 1);
    const start = dataStart + info.offset;
    // Copy into a fresh, aligned Float32Array: the file buffer may not be 4-byte aligned.
    const data = new Float32Array(count);
    Buffer.from(data.buffer).set(buffer.subarray(start, start + count * 4));
    return { name: info.name, dims: info.dims, data };
  });
  return { metadata, tensors };
}

export async function readGgufFile(path: string): Promise<GgufFile> {
  return decodeGguf(await readFile(path));
}

/** Typed metadata lookups that fail loudly, for loading models we expect to be well-formed. */
export function metaNumber(file: GgufFile, key: string): number {
  const v = file.metadata.get(key);
  if (!v || typeof v.value !== 'number') throw new Error(`GGUF metadata ${key} is missing or not a number`);
  return v.value;
}

export function metaString(file: GgufFile, key: string): string | undefined {
  const v = file.metadata.get(key);
  return v && typeof v.value === 'string' ? v.value : undefined;
}
