/**
 * Reads the metadata of a GGUF file and where its header parts lie (tensor data is not parsed),
 * for test fixtures that copy a real vocabulary's tokenizer.* keys or edit a file's header. Kept separate from engine/gguf/reader.ts on purpose: fixtures
 * that check the engine's reader must not be built with it.
 */
import { readFile } from "node:fs/promises";
import { GGUF_MAGIC, GgufValueType, type GgufValue } from "../../engine/gguf/format.js";

export async function readGgufMetadata(path: string): Promise<Map<string, GgufValue>> {
  return (await readGgufLayout(path)).metadata;
}

/** Where the parts of a GGUF header lie, for byte-level edits of test files. */
export interface GgufLayout {
  buffer: Buffer;
  metadata: Map<string, GgufValue>;
  /** [start, end) of each key/value pair's bytes. */
  keyRanges: Map<string, [number, number]>;
  /** Byte offset of the key/value count (a u64 after magic, version and tensor count). */
  kvCountOffset: number;
  /** [start, end) of the tensor infos. */
  tensorInfoRange: [number, number];
  alignment: number;
  /** Start of the tensor data (tensor info end rounded up to the alignment). */
  dataOffset: number;
}

export async function readGgufLayout(path: string): Promise<GgufLayout> {
  const buffer = await readFile(path);
  let offset = 0;
  const u32 = () => {
    const v = buffer.readUInt32LE(offset);
    offset += 4;
    return v;
  };
  const u64 = () => {
    const v = buffer.readBigUInt64LE(offset);
    offset += 8;
    return v;
  };
  const string = () => {
    const length = Number(u64());
    const s = buffer.toString("utf8", offset, offset + length);
    offset += length;
    return s;
  };
  const scalar = (type: GgufValueType): number | bigint | boolean | string => {
    const at = offset;
    switch (type) {
      case GgufValueType.UINT8:
        offset += 1;
        return buffer.readUInt8(at);
      case GgufValueType.INT8:
        offset += 1;
        return buffer.readInt8(at);
      case GgufValueType.UINT16:
        offset += 2;
        return buffer.readUInt16LE(at);
      case GgufValueType.INT16:
        offset += 2;
        return buffer.readInt16LE(at);
      case GgufValueType.UINT32:
        offset += 4;
        return buffer.readUInt32LE(at);
      case GgufValueType.INT32:
        offset += 4;
        return buffer.readInt32LE(at);
      case GgufValueType.FLOAT32:
        offset += 4;
        return buffer.readFloatLE(at);
      case GgufValueType.FLOAT64:
        offset += 8;
        return buffer.readDoubleLE(at);
      case GgufValueType.UINT64:
        offset += 8;
        return buffer.readBigUInt64LE(at);
      case GgufValueType.INT64:
        offset += 8;
        return buffer.readBigInt64LE(at);
      case GgufValueType.BOOL:
        offset += 1;
        return buffer.readUInt8(at) !== 0;
      case GgufValueType.STRING:
        return string();
      default:
        throw new Error(`${path}: unsupported GGUF value type ${type}`);
    }
  };
  if (u32() !== GGUF_MAGIC) throw new Error(`${path} is not a GGUF file`);
  const version = u32();
  if (version !== 3) throw new Error(`${path}: GGUF version ${version}`);
  const tensorCount = Number(u64());
  const kvCountOffset = offset;
  const kvCount = Number(u64());
  const metadata = new Map<string, GgufValue>();
  const keyRanges = new Map<string, [number, number]>();
  for (let i = 0; i < kvCount; i++) {
    const start = offset;
    const key = string();
    const type = u32() as GgufValueType;
    if (type === GgufValueType.ARRAY) {
      const itemType = u32() as GgufValueType;
      const count = Number(u64());
      const items: unknown[] = new Array(count);
      for (let j = 0; j < count; j++) items[j] = scalar(itemType);
      metadata.set(key, { type, itemType, value: items } as GgufValue);
    } else {
      metadata.set(key, { type, value: scalar(type) } as GgufValue);
    }
    keyRanges.set(key, [start, offset]);
  }
  const infoStart = offset;
  for (let i = 0; i < tensorCount; i++) {
    string();
    const nDims = u32();
    offset += 8 * nDims + 4 + 8; // dims, type, data offset
  }
  const alignmentValue = metadata.get("general.alignment")?.value;
  const alignment = typeof alignmentValue === "number" ? alignmentValue : 32;
  const dataOffset = Math.ceil(offset / alignment) * alignment;
  return { buffer, metadata, keyRanges, kvCountOffset, tensorInfoRange: [infoStart, offset], alignment, dataOffset };
}
