/**
 * A zip archive of stored (uncompressed) entries, written as a stream: the cloud's PEFT download puts
 * `adapter_model.safetensors` and `adapter_config.json` in one file a user unzips into the folder
 * PEFT's `from_pretrained` reads, and the studio packs an Ollama or LM Studio export's folder the same way. Stored, because float32 LoRA weights barely compress and deflate
 * would cost the cloud CPU per download; no data descriptors, because each entry's CRC-32 is
 * known before its header is written (the caller reads the file once for it), which every unzip
 * tool accepts, and the archive's exact size is known up front (a Content-Length, a progress bar).
 * No zip64: entries and the archive stay under 4 GiB, which adapters and small models do.
 */
import { crc32 as zlibCrc32 } from "node:zlib";

export interface ZipEntry {
  /** The name inside the archive (forward slashes for folders). */
  name: string;
  size: number;
  /** CRC-32 of the bytes `open` yields. */
  crc32: number;
  modified: Date;
  /** The entry's bytes, read only when the archive reaches it. */
  open(): AsyncIterable<Uint8Array>;
}

const LOCAL_HEADER = 30;
const CENTRAL_HEADER = 46;
const END_OF_CENTRAL_DIRECTORY = 22;
const LIMIT = 0xffff_ffff;
/** Version 2.0 (enough for stored entries and the UTF-8 flag); made on Unix, so the permissions below are read. */
const VERSION_NEEDED = 20;
const VERSION_MADE_BY = (3 << 8) | 20;
/** General-purpose flag bit 11: names are UTF-8. */
const UTF8_NAMES = 0x0800;
/** Unix mode of a regular file, rw-r--r--, in the high half of the external attributes. */
const REGULAR_FILE = (0o100644 << 16) >>> 0;

/** The archive's size in bytes, known before any byte is written. */
export function storedZipSize(entries: readonly Pick<ZipEntry, "name" | "size">[]): number {
  let size = END_OF_CENTRAL_DIRECTORY;
  for (const entry of entries) {
    const name = Buffer.byteLength(entry.name);
    size += LOCAL_HEADER + name + entry.size + CENTRAL_HEADER + name;
  }
  return size;
}

/**
 * The archive's bytes: each entry's local header and data, then the central directory. Fails
 * (so the response is cut, never silently wrong) when an entry yields other than `size` bytes.
 */
export async function* storedZip(entries: readonly ZipEntry[]): AsyncGenerator<Uint8Array> {
  if (entries.length > 0xffff) throw new Error("a zip without zip64 holds at most 65,535 entries");
  if (storedZipSize(entries) > LIMIT) throw new Error("the archive would pass 4 GiB, which needs zip64");
  const central: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, "utf8");
    const { time, date } = dosDateTime(entry.modified);
    const local = Buffer.alloc(LOCAL_HEADER);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(VERSION_NEEDED, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(entry.crc32 >>> 0, 14);
    local.writeUInt32LE(entry.size, 18);
    local.writeUInt32LE(entry.size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    yield Buffer.concat([local, name]);

    let written = 0;
    for await (const chunk of entry.open()) {
      written += chunk.length;
      if (written > entry.size) break;
      yield chunk;
    }
    if (written !== entry.size) throw new Error(`${entry.name} changed while it was zipped: ${written} bytes instead of ${entry.size}`);

    const header = Buffer.alloc(CENTRAL_HEADER);
    header.writeUInt32LE(0x02014b50, 0);
    header.writeUInt16LE(VERSION_MADE_BY, 4);
    header.writeUInt16LE(VERSION_NEEDED, 6);
    header.writeUInt16LE(UTF8_NAMES, 8);
    header.writeUInt16LE(0, 10);
    header.writeUInt16LE(time, 12);
    header.writeUInt16LE(date, 14);
    header.writeUInt32LE(entry.crc32 >>> 0, 16);
    header.writeUInt32LE(entry.size, 20);
    header.writeUInt32LE(entry.size, 24);
    header.writeUInt16LE(name.length, 28);
    // extra field length, comment length, disk number start, internal attributes: all 0
    header.writeUInt32LE(REGULAR_FILE, 38);
    header.writeUInt32LE(offset, 42);
    central.push(header, name);
    offset += LOCAL_HEADER + name.length + entry.size;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(END_OF_CENTRAL_DIRECTORY);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  yield Buffer.concat([directory, end]);
}

/** MS-DOS date and time fields (local time, 2-second resolution; 1980 is the earliest year they hold). */
export function dosDateTime(when: Date): { time: number; date: number } {
  const year = Math.min(Math.max(when.getFullYear(), 1980), 2107);
  return {
    time: (when.getHours() << 11) | (when.getMinutes() << 5) | Math.floor(when.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((when.getMonth() + 1) << 5) | when.getDate(),
  };
}

/** CRC-32 (the zip and PNG polynomial) of `data`, continuing from `previous` for data read in pieces. */
export function crc32(data: Uint8Array, previous = 0): number {
  return zlibCrc32(data, previous);
}
