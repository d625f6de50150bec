/**
 * VS Code saves an Ollama or LM Studio export as a folder by unpacking the studio's stored zip as it arrives
 * (extension/panels/unpackStoredZip.ts): the zip is the studio's own writer's (server-shared/storedZip.ts), and what
 * unpacks must equal what went in; a damaged entry or a name leaving the folder fails and leaves no file behind.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { crc32, storedZip, type ZipEntry } from "../../../server-shared/storedZip.js";
import { unpackStoredZip } from "../../../extension/panels/unpackStoredZip.js";

function entry(name: string, data: Buffer, crc = crc32(data)): ZipEntry {
  return {
    name,
    size: data.length,
    crc32: crc,
    modified: new Date(2026, 0, 2),
    open: async function* () {
      // Uneven pieces, so headers and data cross chunk boundaries.
      for (let i = 0; i < data.length; i += 7) yield data.subarray(i, i + 7);
    },
  };
}

/** The zip's bytes re-chunked in pieces of `size`, as a network body arrives. */
async function* chunked(entries: ZipEntry[], size: number): AsyncGenerator<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const part of storedZip(entries)) parts.push(part);
  const whole = Buffer.concat(parts);
  for (let i = 0; i < whole.length; i += size) yield whole.subarray(i, i + size);
}

async function* pieces(...chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* chunks;
}

describe("unpackStoredZip", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), "svc-unpack-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const size of [1, 5, 64 * 1024]) {
    it(`unpacks every entry under its path, byte for byte (body in ${size}-byte pieces)`, async () => {
      const gguf = Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 256));
      const modelfile = Buffer.from("FROM ./base.gguf\nADAPTER ./lora.gguf\n");
      const names = await unpackStoredZip(
        chunked([entry("Modelfile", modelfile), entry("svc/job-1/base.gguf", gguf), entry("empty", Buffer.alloc(0))], size),
        dir,
      );
      assert.deepEqual(names, ["Modelfile", "svc/job-1/base.gguf", "empty"]);
      assert.ok(readFileSync(path.join(dir, "Modelfile")).equals(modelfile));
      assert.ok(readFileSync(path.join(dir, "svc", "job-1", "base.gguf")).equals(gguf));
      assert.equal(readFileSync(path.join(dir, "empty")).length, 0);
      assert.deepEqual(readdirSync(dir).sort(), ["Modelfile", "empty", "svc"], "no .part file left");
    });
  }

  it("refuses an entry whose bytes do not match its CRC-32, leaving no file", async () => {
    const data = Buffer.from("weights");
    await assert.rejects(unpackStoredZip(chunked([entry("model.gguf", data, crc32(data) ^ 1)], 3), dir), /model\.gguf arrived damaged/);
    assert.deepEqual(readdirSync(dir), []);
  });

  for (const name of ["../escape.gguf", "/etc/escape", "svc/../../escape", "C:/escape", "a\\b"]) {
    it(`refuses a name that leaves the folder: ${name}`, async () => {
      await assert.rejects(unpackStoredZip(chunked([entry(name, Buffer.from("x"))], 16), dir), /outside the folder it unpacks into/);
      assert.equal(existsSync(path.join(path.dirname(dir), "escape.gguf")), false);
    });
  }

  it("refuses bytes that are not a zip, and a zip cut short", async () => {
    await assert.rejects(unpackStoredZip(pieces(Buffer.from("GGUF and more bytes")), dir), /not a zip/);
    const parts: Uint8Array[] = [];
    for await (const part of storedZip([entry("model.gguf", Buffer.alloc(100, 1))])) parts.push(part);
    const cut = Buffer.concat(parts).subarray(0, 80);
    await assert.rejects(unpackStoredZip(pieces(cut), dir), /the zip ended early/);
    assert.deepEqual(readdirSync(dir), [], "the partial file removed");
  });
});
