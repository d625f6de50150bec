/**
 * Serialises a GgufFile (metadata + tensors) to GGUF v3 bytes. Each tensor is stored as its
 * `type` (F32 by default; quantised by quantize.ts otherwise). Tensor data offsets are aligned to
 * 32 bytes as llama.cpp requires (general.alignment is left at its default).
 */
import { open, rename } from 'node:fs/promises';
import { quantize } from './quantize.js';
import { ggmlByteLength, ggmlTypeInfo } from './ggml-types.js';
import { GGML_TYPE_F32, GGUF_ALIGNMENT, GGUF_MAGIC, GGUF_VERSION, GgufValueType, type GgufFile, type GgufValue } from './format.js';

class ByteSink {
  private chunks: Buffer[] = [];
  length = 0;

  push(buffer: Buffer): void {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  padTo(alignment: number): void {
    const pad = (alignment - (this.length % alignment)) % alignment;
    if (pad) this.push(Buffer.alloc(pad));
  }
  concat(): Buffer {
    return Buffer.concat(this.chunks, this.length);
  }
}

function writeScalar(sink: ByteSink, type: GgufValueType, value: number | bigint | boolean | string): void {
  switch (type) {
    case GgufValueType.UINT8:
      return sink.push(Buffer.from([Number(value) & 0xff]));
    case GgufValueType.INT8: {
      const b = Buffer.alloc(1);
      b.writeInt8(Number(value));
      return sink.push(b);
    }
    case GgufValueType.UINT16: {
      const b = Buffer.alloc(2);
      b.writeUInt16LE(Number(value));
      return sink.push(b);
    }
    case GgufValueType.INT16: {
      const b = Buffer.alloc(2);
      b.writeInt16LE(Number(value));
      return sink.push(b);
    }
    case GgufValueType.UINT32:
      return sink.u32(Number(value));
    case GgufValueType.INT32:
      return sink.i32(Number(value));
    case GgufValueType.FLOAT32:
      return sink.f32(Number(value));
    case GgufValueType.FLOAT64: {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(Number(value));
      return sink.push(b);
    }
    case GgufValueType.UINT64:
      return sink.u64(BigInt(value as bigint));
    case GgufValueType.INT64: {
      const b = Buffer.alloc(8);
      b.writeBigInt64LE(BigInt(value as bigint));
      return sink.push(b);
    }
    case GgufValueType.BOOL:
      return sink.push(Buffer.from([value ? 1 : 0]));
    case GgufValueType.STRING:
      return sink.string(String(value));
    default:
      throw new Error(`cannot write scalar of GGUF type ${type}`);
  }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  sink.u32(value.type);
  if (value.type === GgufValueType.ARRAY) {
    sink.u32(value.itemType);
    sink.u64(value.value.length);
    for (const item of value.value) writeScalar(sink, value.itemType, item);
  } else {
    writeScalar(sink, value.type, value.value);
  }
}

/** A tensor's entry in a header: its stored type and byte length (before padding). */
export interface GgufTensorLayout {
  name: string;
  dims: number[];
  type: number;
  bytes: number;
}

/**
 * The header (metadata, tensor infos, padding to the data): what precedes the tensors' bytes, which
 * follow in this order, each padded to the alignment. Lets a writer stream tensors it has not made yet.
 */
export function encodeGgufHeader(metadata: Map<string, GgufValue>, tensors: readonly GgufTensorLayout[]): Buffer {
  const sink = new ByteSink();
  sink.u32(GGUF_MAGIC);
  sink.u32(GGUF_VERSION);
  sink.u64(tensors.length);
  sink.u64(metadata.size);
  for (const [key, value] of metadata) {
    sink.string(key);
    writeValue(sink, value);
  }
  let offset = 0;
  for (const tensor of tensors) {
    const { name, blockElements } = ggmlTypeInfo(tensor.type, tensor.name);
    // ggml quantises rows: a row (ne0) that is not whole blocks cannot be stored in this type.
    if ((tensor.dims[0] ?? 1) % blockElements !== 0)
      throw new Error(`tensor ${tensor.name}: row length ${tensor.dims[0]} is not a multiple of ${name}'s block of ${blockElements}`);
    sink.string(tensor.name);
    sink.u32(tensor.dims.length);
    for (const dim of tensor.dims) sink.u64(dim);
    sink.u32(tensor.type);
    sink.u64(offset);
    offset += Math.ceil(tensor.bytes / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
  }
  sink.padTo(GGUF_ALIGNMENT);
  return sink.concat();
}

export function encodeGguf(file: GgufFile): Buffer {
  const { header, payloads } = layoutGguf(file);
  const parts: Buffer[] = [header];
  for (const payload of payloads) parts.push(...payload());
  return Buffer.concat(parts);
}

/**
 * The header and, per tensor, a function that quantises it and returns its bytes with their
 * padding: a writer holds one tensor's bytes at a time.
 */
function layoutGguf(file: GgufFile): { header: Buffer; payloads: Array<() => Buffer[]> } {
  const layout: GgufTensorLayout[] = [];
  const payloads: Array<() => Buffer[]> = [];
  for (const tensor of file.tensors) {
    const count = tensor.dims.reduce((a, b) => a * b, 1);
    if (count !== tensor.data.length) throw new Error(`tensor ${tensor.name}: dims ${tensor.dims} do not match ${tensor.data.length} values`);
    const type = tensor.type ?? GGML_TYPE_F32;
    const bytes = ggmlByteLength(type, count, tensor.name);
    layout.push({ name: tensor.name, dims: tensor.dims, type, bytes });
    const padded = Math.ceil(bytes / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
    payloads.push(() => {
      const data = quantize(type, tensor.data);
      return [Buffer.from(data.buffer, data.byteOffset, data.byteLength), Buffer.alloc(padded - bytes)];
    });
  }
  return { header: encodeGgufHeader(file.metadata, layout), payloads };
}

/** Writes atomically (temp file + rename) so a reader never sees a half-written model; one tensor's bytes in memory at a time. */
export async function writeGgufFile(path: string, file: GgufFile): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  const { header, payloads } = layoutGguf(file);
  const handle = await open(temp, 'w');
  try {
    const write = async (buffer: Buffer) => {
      for (let done = 0; done < buffer.length; ) done += (await handle.write(buffer, done)).bytesWritten;
    };
    await write(header);
    for (const payload of payloads) for (const part of payload()) await write(part);
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}
