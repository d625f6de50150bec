/**
 * The torch backend's wire format (PROTOCOL.md): u32 little-endian header length, a UTF-8 JSON
 * header, then the binary tensors the header lists in `tensors`, back to back. The decoder is fed
 * stdout chunks as they come and hands back whole frames; bytes that cannot be a frame (a stray
 * print, a Python banner) raise a FramingError that quotes them.
 */

export type WireDtype = 'f32' | 'i32';

export interface WireTensor {
  name: string;
  dtype: WireDtype;
  shape: number[];
  data: Float32Array | Int32Array;
}

interface TensorSpec {
  name: string;
  dtype: WireDtype;
  shape: number[];
  bytes: number;
}

export interface Frame {
  header: Record<string, unknown>;
  tensors: Map<string, WireTensor>;
}

/** A header this large means the stream is not frames (JSON headers are a few hundred bytes). */
export const MAX_HEADER_BYTES = 64 * 2 ** 20;

export class FramingError extends Error {}

export function encodeFrame(header: Record<string, unknown>, tensors: WireTensor[] = []): Buffer {
  const specs: TensorSpec[] = tensors.map((t) => ({ name: t.name, dtype: t.dtype, shape: t.shape, bytes: t.data.byteLength }));
  const json = Buffer.from(JSON.stringify(specs.length ? { ...header, tensors: specs } : header), 'utf8');
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(json.length);
  return Buffer.concat([prefix, json, ...tensors.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength))]);
}

/** Shows bytes that should have been a frame as text, for error messages. */
function quote(bytes: Buffer): string {
  return JSON.stringify(bytes.subarray(0, 200).toString('utf8'));
}

export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** Adds bytes and returns every frame now complete. */
  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      const frame = this.next();
      if (!frame) return frames;
      frames.push(frame);
    }
  }

  private peek(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private next(): Frame | undefined {
    if (this.buffered < 4) return undefined;
    const buffer = this.peek();
    const headerLength = buffer.readUInt32LE(0);
    if (headerLength > MAX_HEADER_BYTES || (buffer.length > 4 && buffer[4] !== 0x7b) /* { */) {
      throw new FramingError(`expected a frame, got ${quote(buffer)}`);
    }
    if (buffer.length < 4 + headerLength) return undefined;
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(buffer.toString('utf8', 4, 4 + headerLength));
    } catch {
      throw new FramingError(`frame header is not JSON: ${quote(buffer)}`);
    }
    const specs = (header.tensors as TensorSpec[] | undefined) ?? [];
    const total = 4 + headerLength + specs.reduce((sum, s) => sum + s.bytes, 0);
    if (buffer.length < total) return undefined;
    const tensors = new Map<string, WireTensor>();
    let offset = 4 + headerLength;
    for (const spec of specs) {
      // Copy out so the tensor owns aligned memory (a Float32Array needs a 4-byte-aligned offset).
      const bytes = new Uint8Array(spec.bytes);
      bytes.set(buffer.subarray(offset, offset + spec.bytes));
      offset += spec.bytes;
      const data = spec.dtype === 'i32' ? new Int32Array(bytes.buffer) : new Float32Array(bytes.buffer);
      tensors.set(spec.name, { name: spec.name, dtype: spec.dtype, shape: spec.shape, data });
    }
    const rest = buffer.subarray(total);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    delete header.tensors;
    return { header, tensors };
  }
}
