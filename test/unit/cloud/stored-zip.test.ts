/**
 * The stored zip of the PEFT download (server-shared/storedZip.ts), checked by readers nobody here wrote: Info-ZIP's
 * `unzip` (CRC-32s, sizes, names) and Python's zipfile; its CRC-32 against zlib's.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { crc32, dosDateTime, storedZip, storedZipSize, type ZipEntry } from "../../../server-shared/storedZip.js";
import { withTempDir } from "../../support/tmp.js";

/** An entry of these bytes, handed out in pieces of `chunk` as a file stream would. */
function entry(name: string, bytes: Buffer, chunk = 7): ZipEntry {
  return {
    name,
    size: bytes.length,
    crc32: crc32(bytes),
    modified: new Date(2024, 5, 17, 13, 45, 30),
    async *open() {
      for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
    },
  };
}

async function collect(entries: ZipEntry[]): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of storedZip(entries)) parts.push(part);
  return Buffer.concat(parts);
}

describe("stored zip writer", () => {
  it("CRC-32 equals zlib's, whole or in pieces", () => {
    const data = randomBytes(10_000);
    const reference = (zlib as unknown as { crc32?: (d: Uint8Array) => number }).crc32;
    assert.equal(crc32(Buffer.from("123456789")), 0xcbf43926, "the check value of CRC-32/ISO-HDLC");
    assert.equal(crc32(new Uint8Array()), 0);
    if (reference) assert.equal(crc32(data), reference(data));
    assert.equal(crc32(data.subarray(4000), crc32(data.subarray(0, 4000))), crc32(data));
  });

  it("writes an archive unzip and Python read back byte for byte, of the size announced first", async () => {
    await withTempDir("zip", async (dir) => {
      const weights = randomBytes(50_000);
      const config = Buffer.from(JSON.stringify({ peft_type: "LORA", r: 8 }));
      const empty = Buffer.alloc(0);
      const entries = [entry("adapter_model.safetensors", weights, 4096), entry("adapter_config.json", config), entry("notes/ünïcode.txt", empty)];
      const zip = await collect(entries);
      assert.equal(zip.length, storedZipSize(entries));
      const file = path.join(dir, "a.zip");
      writeFileSync(file, zip);
      assert.match(execFileSync("unzip", ["-t", file], { encoding: "utf8" }), /No errors detected in compressed data/);
      execFileSync("unzip", ["-q", file, "-d", path.join(dir, "out")]);
      assert.ok(readFileSync(path.join(dir, "out", "adapter_model.safetensors")).equals(weights));
      assert.ok(readFileSync(path.join(dir, "out", "adapter_config.json")).equals(config));
      const listing = execFileSync(
        "python3",
        [
          "-c",
          "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; print('\\n'.join(f'{i.filename}|{i.file_size}|{i.compress_type}|{i.date_time}' for i in z.infolist()))",
          file,
        ],
        { encoding: "utf8" },
      );
      assert.deepEqual(listing.trim().split("\n"), [
        `adapter_model.safetensors|${weights.length}|0|(2024, 6, 17, 13, 45, 30)`,
        `adapter_config.json|${config.length}|0|(2024, 6, 17, 13, 45, 30)`,
        "notes/ünïcode.txt|0|0|(2024, 6, 17, 13, 45, 30)",
      ]);
    });
  });

  it("an empty archive is the end record alone", async () => {
    const zip = await collect([]);
    assert.equal(zip.length, 22);
    assert.equal(zip.readUInt32LE(0), 0x06054b50);
  });

  it("fails instead of writing a wrong archive when an entry's bytes are not its announced size", async () => {
    const shorter = { ...entry("a.bin", randomBytes(100)), size: 120 };
    await assert.rejects(collect([shorter]), /a\.bin changed while it was zipped: 100 bytes instead of 120/);
    const longer = { ...entry("b.bin", randomBytes(100)), size: 50 };
    await assert.rejects(collect([longer]), /b\.bin changed while it was zipped/);
  });

  it("MS-DOS dates: two-second resolution, years clamped to what the fields hold", () => {
    assert.deepEqual(dosDateTime(new Date(2024, 5, 17, 13, 45, 31)), { time: (13 << 11) | (45 << 5) | 15, date: (44 << 9) | (6 << 5) | 17 });
    assert.equal(dosDateTime(new Date(1970, 0, 1)).date >> 9, 0);
  });
});
