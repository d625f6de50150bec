/**
 * Unpacks a zip the studio sends (server-shared/storedZip.ts: stored entries, sizes and CRC-32 in
 * each local header, no data descriptors) into a folder as it arrives, so VS Code saves an Ollama or
 * LM Studio export as the folder `svc export` writes, never holding the model in memory. Each file
 * goes to `<file>.part` and is renamed once whole and its CRC-32 checked; a name that would leave the
 * folder (absolute, `..`) or an entry this reader cannot take (compressed) fails the whole unpack.
 */
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { crc32 } from "node:zlib";

const LOCAL_FILE = 0x04034b50;
const CENTRAL_DIRECTORY = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const DATA_DESCRIPTOR_FLAG = 0x08;

/** Reads exact byte counts from a stream of chunks. */
class ByteReader {
  private pending: Buffer = Buffer.alloc(0);
  private readonly source: AsyncIterator<Uint8Array>;

  constructor(body: AsyncIterable<Uint8Array>) {
    this.source = body[Symbol.asyncIterator]();
  }

  private async more(): Promise<boolean> {
    const next = await this.source.next();
    if (next.done) return false;
    this.pending = this.pending.length === 0 ? Buffer.from(next.value) : Buffer.concat([this.pending, next.value]);
    return true;
  }

  async exact(count: number): Promise<Buffer> {
    while (this.pending.length < count) {
      if (!(await this.more())) throw new Error("the zip ended early");
    }
    const bytes = this.pending.subarray(0, count);
    this.pending = this.pending.subarray(count);
    return bytes;
  }

  /** The next `count` bytes, in the pieces they arrive in. */
  async *take(count: number): AsyncGenerator<Buffer> {
    let left = count;
    while (left > 0) {
      if (this.pending.length === 0 && !(await this.more())) throw new Error("the zip ended early");
      const piece = this.pending.subarray(0, Math.min(left, this.pending.length));
      this.pending = this.pending.subarray(piece.length);
      left -= piece.length;
      yield piece;
    }
  }

  async cancel(): Promise<void> {
    await this.source.return?.();
  }
}

/** Writes each entry of the zip under `folder` (created if missing); resolves with the entries' names. */
export async function unpackStoredZip(body: AsyncIterable<Uint8Array>, folder: string): Promise<string[]> {
  const reader = new ByteReader(body);
  const names: string[] = [];
  try {
    await mkdir(folder, { recursive: true });
    for (;;) {
      const signature = (await reader.exact(4)).readUInt32LE(0);
      if (signature === CENTRAL_DIRECTORY || signature === END_OF_CENTRAL_DIRECTORY) break;
      if (signature !== LOCAL_FILE) throw new Error("not a zip");
      const header = await reader.exact(26);
      const [flags, method, crc, size] = [header.readUInt16LE(2), header.readUInt16LE(4), header.readUInt32LE(10), header.readUInt32LE(18)];
      if (method !== 0 || flags & DATA_DESCRIPTOR_FLAG) throw new Error("a compressed zip entry: only the studio's stored zips unpack here");
      const name = (await reader.exact(header.readUInt16LE(22))).toString("utf8");
      await reader.exact(header.readUInt16LE(24));
      const target = insideFolder(folder, name);
      if (name.endsWith("/")) {
        await mkdir(target, { recursive: true });
        continue;
      }
      await mkdir(path.dirname(target), { recursive: true });
      const partial = `${target}.part`;
      let sum = 0;
      const data = reader.take(size);
      try {
        await pipeline(
          Readable.from(
            (async function* () {
              for await (const piece of data) {
                sum = crc32(piece, sum);
                yield piece;
              }
            })(),
          ),
          createWriteStream(partial),
        );
        if (sum >>> 0 !== crc >>> 0) throw new Error(`${name} arrived damaged (its CRC-32 does not match)`);
        await rename(partial, target);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      names.push(name);
    }
    return names;
  } finally {
    await reader.cancel();
  }
}

/** Where entry `name` goes, refusing one that would land outside `folder`. */
function insideFolder(folder: string, name: string): string {
  const parts = name.split("/");
  if (name.startsWith("/") || name.includes("\\") || /^[A-Za-z]:/.test(name) || parts.includes("..")) {
    throw new Error(`the zip names ${JSON.stringify(name)}, outside the folder it unpacks into`);
  }
  return path.join(folder, ...parts);
}
