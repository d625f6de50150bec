/**
 * Parses GGUF v3 files: the header alone (readGgufHeader, for describing multi-GB models without
 * reading their weights), one tensor at a time through a file handle (openGgufTensors), or a
 * whole file in memory (decodeGguf / readGgufFile). Tensor data of every type in
 * ggml-types.ts's SUPPORTED_GGML_TYPES is dequantised to F32.
 */
import { open, readFile } from 'node:fs/promises';
import {
  GGML_TYPE_F32,
  GGUF_ALIGNMENT,
  GGUF_MAGIC,
  GgufValueType,
  type GgufFile,
  type GgufHeader,
  type GgufTensor,
  type GgufTensorInfo,
  type GgufValue,
} from './format.js';
import { knownGgmlType, ggmlByteLength } from './ggml-types.js';
import { dequantize } from './dequantize.js';

export type { GgufHeader, GgufTensorInfo } from './format.js';

/** Thrown when parsing runs past the bytes at hand: the caller reads more, or the file is truncated. */
class OutOfBytes extends Error {
  constructor(readonly what: string) {
    super(what);
  }
}

/** Beyond these a header is corrupt, not large (the biggest vocabularies have ~260k tokens). */
const MAX_DIMS = 8;
const SCALAR_BYTES: Partial<Record<GgufValueType, number>> = {
  [GgufValueType.UINT8]: 1,
  [GgufValueType.INT8]: 1,
  [GgufValueType.BOOL]: 1,
  [GgufValueType.UINT16]: 2,
  [GgufValueType.INT16]: 2,
  [GgufValueType.UINT32]: 4,
  [GgufValueType.INT32]: 4,
  [GgufValueType.FLOAT32]: 4,
  [GgufValueType.UINT64]: 8,
  [GgufValueType.INT64]: 8,
  [GgufValueType.FLOAT64]: 8,
  [GgufValueType.STRING]: 8, // at least its length
};

class ByteSource {
  offset = 0;
  /** @param fileSize the whole file's size, so impossible lengths are caught before reading on. */
  constructor(
    private readonly buffer: Buffer,
    private readonly fileSize: number,
  ) {}

  private need(n: number, what: string): void {
    if (this.offset + n > this.buffer.length) throw new OutOfBytes(what);
  }
  u8(): number {
    this.need(1, 'u8');
    return this.buffer.readUInt8(this.offset++);
  }
  u32(what = 'u32'): number {
    this.need(4, what);
    const v = this.buffer.readUInt32LE(this.offset);
    this.offset += 4;
    return v;
  }
  u64(what = 'u64'): bigint {
    this.need(8, what);
    const v = this.buffer.readBigUInt64LE(this.offset);
    this.offset += 8;
    return v;
  }
  safeU64(what = 'u64'): number {
    const v = this.u64(what);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`corrupt GGUF: ${what} ${v} is too large`);
    return Number(v);
  }
  /** A count of items of at least `itemBytes` each; more than the file could hold means corruption. */
  count(itemBytes: number, what: string): number {
    const n = this.safeU64(what);
    if (n * itemBytes > this.fileSize - this.offset) throw new Error(`truncated GGUF: ${what} ${n} needs more bytes than the file has (${this.fileSize})`);
    this.need(n * itemBytes, what);
    return n;
  }
  string(what = 'string'): string {
    const length = this.count(1, `${what} length`);
    const s = this.buffer.toString('utf8', this.offset, this.offset + length);
    this.offset += length;
    return s;
  }
  scalar(type: GgufValueType): number | bigint | boolean | string {
    const b = this.buffer;
    const size = SCALAR_BYTES[type];
    if (size === undefined) throw new Error(`corrupt GGUF: unsupported value type ${type}`);
    if (type === GgufValueType.STRING) return this.string();
    this.need(size, 'value');
    const at = this.offset;
    this.offset += size;
    switch (type) {
      case GgufValueType.UINT8:
        return b.readUInt8(at);
      case GgufValueType.INT8:
        return b.readInt8(at);
      case GgufValueType.UINT16:
        return b.readUInt16LE(at);
      case GgufValueType.INT16:
        return b.readInt16LE(at);
      case GgufValueType.UINT32:
        return b.readUInt32LE(at);
      case GgufValueType.INT32:
        return b.readInt32LE(at);
      case GgufValueType.FLOAT32:
        return b.readFloatLE(at);
      case GgufValueType.FLOAT64:
        return b.readDoubleLE(at);
      case GgufValueType.UINT64:
        return b.readBigUInt64LE(at);
      case GgufValueType.INT64:
        return b.readBigInt64LE(at);
      default:
        return b[at] !== 0; // BOOL
    }
  }
}

function readValue(source: ByteSource, key: string): GgufValue {
  const type = source.u32(`type of ${key}`) as GgufValueType;
  if (type === GgufValueType.ARRAY) {
    const itemType = source.u32(`item type of ${key}`) as GgufValueType;
    const itemBytes = SCALAR_BYTES[itemType];
    if (itemBytes === undefined) throw new Error(`corrupt GGUF: ${key} is an array of unsupported type ${itemType}`);
    const count = source.count(itemBytes, `length of ${key}`);
    const items = new Array(count);
    for (let i = 0; i < count; i++) items[i] = source.scalar(itemType);
    return { type, itemType, value: items } as GgufValue;
  }
  return { type, value: source.scalar(type) } as GgufValue;
}

/** Parses the header from the first bytes of a file; throws OutOfBytes if `buffer` ends too soon. */
function parseHeader(buffer: Buffer, fileSize: number): GgufHeader {
  const source = new ByteSource(buffer, fileSize);
  // Too short for the magic is a cut-off file (OutOfBytes below); four wrong bytes are not GGUF.
  if (buffer.length >= 4 && buffer.readUInt32LE(0) !== GGUF_MAGIC) throw new Error('not a GGUF file (bad magic)');
  source.u32('magic');
  const version = source.u32('version');
  if (version !== 3) throw new Error(`unsupported GGUF version ${version}`);
  const tensorCount = source.count(8 + 4 + 4 + 8, 'tensor count');
  const kvCount = source.count(8 + 4, 'metadata count');
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = source.string('metadata key');
    metadata.set(key, readValue(source, key));
  }
  const alignmentValue = metadata.get('general.alignment');
  const alignment = alignmentValue && typeof alignmentValue.value === 'number' && alignmentValue.value > 0 ? alignmentValue.value : GGUF_ALIGNMENT;
  const infos: Array<Omit<GgufTensorInfo, 'offset' | 'byteLength'> & { relative: number }> = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = source.string('tensor name');
    const nDims = source.u32(`dims of ${name}`);
    if (nDims > MAX_DIMS) throw new Error(`corrupt GGUF: tensor ${name} has ${nDims} dims`);
    const dims: number[] = [];
    for (let d = 0; d < nDims; d++) dims.push(source.safeU64(`dim of ${name}`));
    const type = source.u32(`type of ${name}`);
    infos.push({ name, dims, type, relative: source.safeU64(`offset of ${name}`) });
  }
  const dataOffset = Math.ceil(source.offset / alignment) * alignment;
  const tensors = infos.map(({ name, dims, type, relative }): GgufTensorInfo => {
    const known = knownGgmlType(type);
    const count = dims.reduce((a, b) => a * b, 1);
    const byteLength = known ? (count / known.blockElements) * known.blockBytes : NaN;
    return { name, dims, type, offset: dataOffset + relative, byteLength };
  });
  return { version, metadata, tensors, alignment, dataOffset };
}

/** Parses a header from an in-memory file. */
function headerOf(buffer: Buffer): GgufHeader {
  try {
    return parseHeader(buffer, buffer.length);
  } catch (err) {
    if (err instanceof OutOfBytes) throw new Error(`truncated GGUF: the header ends inside ${err.what} (file has ${buffer.length} bytes)`);
    throw err;
  }
}

const FIRST_CHUNK = 1 << 20;

/**
 * Reads only a GGUF's header (metadata and tensor infos), in growing chunks: real vocabularies
 * put 10+ MB of tokens and merges there, while the weights after it may be many GB.
 */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  const handle = await open(path, 'r');
  try {
    const fileSize = (await handle.stat()).size;
    let buffer = Buffer.alloc(0);
    for (let want = FIRST_CHUNK; ; want *= 4) {
      const size = Math.min(want, fileSize);
      const grown = Buffer.alloc(size);
      buffer.copy(grown);
      const { bytesRead } = await handle.read(grown, buffer.length, size - buffer.length, buffer.length);
      buffer = grown.subarray(0, buffer.length + bytesRead);
      try {
        return parseHeader(buffer, fileSize);
      } catch (err) {
        if (!(err instanceof OutOfBytes)) throw err;
        if (buffer.length >= fileSize) throw new Error(`truncated GGUF: the header ends inside ${err.what} (file has ${fileSize} bytes)`);
      }
    }
  } finally {
    await handle.close();
  }
}

function truncatedTensor(info: GgufTensorInfo, fileSize: number): Error {
  return new Error(`truncated GGUF: tensor ${info.name} needs bytes up to ${info.offset + info.byteLength} but the file has ${fileSize}`);
}

/** Element count of a tensor we can dequantise (throws UnsupportedTensorTypeError, or for partial blocks). */
function checkedSize(info: GgufTensorInfo): number {
  const count = info.dims.reduce((a, b) => a * b, 1);
  ggmlByteLength(info.type, count, info.name);
  return count;
}

function toTensor(info: GgufTensorInfo, bytes: Uint8Array, count: number): GgufTensor {
  const data = dequantize(info.type, bytes, count);
  return info.type === GGML_TYPE_F32 ? { name: info.name, dims: info.dims, data } : { name: info.name, dims: info.dims, data, type: info.type };
}

export function decodeGguf(buffer: Buffer): GgufFile {
  const header = headerOf(buffer);
  const tensors: GgufTensor[] = header.tensors.map((info) => {
    const count = checkedSize(info);
    if (info.offset + info.byteLength > buffer.length) throw truncatedTensor(info, buffer.length);
    return toTensor(info, buffer.subarray(info.offset, info.offset + info.byteLength), count);
  });
  return { metadata: header.metadata, tensors };
}

export async function readGgufFile(path: string): Promise<GgufFile> {
  return decodeGguf(await readFile(path));
}

export interface GgufTensorReader {
  header: GgufHeader;
  /** One tensor, dequantised to F32; only its bytes are read from the file. */
  readF32(name: string): Promise<Float32Array>;
  close(): Promise<void>;
}

const READ_CHUNK = 1 << 30;

/** Opens a GGUF for reading tensors one at a time, so a multi-GB model is never held twice. */
export async function openGgufTensors(path: string): Promise<GgufTensorReader> {
  const header = await readGgufHeader(path);
  const handle = await open(path, 'r');
  const byName = new Map(header.tensors.map((t) => [t.name, t]));
  return {
    header,
    async readF32(name: string): Promise<Float32Array> {
      const info = byName.get(name);
      if (!info) throw new Error(`GGUF ${path} has no tensor ${name}`);
      const count = checkedSize(info);
      // Every byte is overwritten below (or we throw), so the zero fill can be skipped.
      const bytes = Buffer.allocUnsafe(info.byteLength);
      let done = 0;
      while (done < info.byteLength) {
        // One read returns at most ~2 GB (and may return less): loop until the tensor is in.
        const { bytesRead } = await handle.read(bytes, done, Math.min(info.byteLength - done, READ_CHUNK), info.offset + done);
        if (bytesRead === 0) throw truncatedTensor(info, (await handle.stat()).size);
        done += bytesRead;
      }
      return dequantize(info.type, bytes, count);
    },
    close: () => handle.close(),
  };
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
