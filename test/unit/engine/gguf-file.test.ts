/**
 * GGUF files with quantised tensors: the header-only reader against the whole-file one on a real
 * vocabulary GGUF, writer round trips for every supported type and every metadata value type,
 * one-tensor reads, clear errors for cut-off, foreign and unsupported files, and inspectGguf.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dequantize } from '../../../engine/gguf/dequantize.js';
import { GgufValueType, f32, str, u32, type GgufFile, type GgufValue } from '../../../engine/gguf/format.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName, UnsupportedTensorTypeError } from '../../../engine/gguf/ggml-types.js';
import { inspectGguf } from '../../../engine/gguf/inspect.js';
import { quantize } from '../../../engine/gguf/quantize.js';
import { decodeGguf, openGgufTensors, readGgufFile, readGgufHeader } from '../../../engine/gguf/reader.js';
import { encodeGguf, writeGgufFile } from '../../../engine/gguf/writer.js';
import { withTempDir } from '../../fixtures/engine/tiny-model.js';
import { vocabGguf } from '../../support/llamaCppSource.js';

const TYPES = [GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K];

function values(count: number, seed: number): Float32Array {
  return Float32Array.from({ length: count }, (_, i) => Math.sin(i * 0.731 + seed) * 0.1 + (i % 7) * 0.003);
}

/** One tensor of each supported type, rows of 256 so every block size fits. */
function fileOfEveryType(): GgufFile {
  return {
    metadata: new Map([['general.architecture', str('llama')]]),
    tensors: TYPES.map((type, i) => ({ name: `t.${ggmlTypeName(type)}`, dims: [256, 3], data: values(768, i), type })),
  };
}

/** A value of every GGUF metadata type, scalars and arrays, as real tokenizer metadata has. */
const EVERY_VALUE: Array<[string, GgufValue]> = [
  ['v.u8', { type: GgufValueType.UINT8, value: 200 }],
  ['v.i8', { type: GgufValueType.INT8, value: -100 }],
  ['v.u16', { type: GgufValueType.UINT16, value: 60000 }],
  ['v.i16', { type: GgufValueType.INT16, value: -30000 }],
  ['v.u32', { type: GgufValueType.UINT32, value: 4000000000 }],
  ['v.i32', { type: GgufValueType.INT32, value: -2000000000 }],
  ['v.f32', { type: GgufValueType.FLOAT32, value: 0.5 }],
  ['v.f64', { type: GgufValueType.FLOAT64, value: 0.1 }],
  ['v.u64', { type: GgufValueType.UINT64, value: 2n ** 60n }],
  ['v.i64', { type: GgufValueType.INT64, value: -(2n ** 60n) }],
  ['v.bool', { type: GgufValueType.BOOL, value: true }],
  ['v.str', { type: GgufValueType.STRING, value: 'héllo ▁world' }],
  ['v.strs', { type: GgufValueType.ARRAY, itemType: GgufValueType.STRING, value: ['<s>', '', 'Ġthe'] }],
  ['v.f32s', { type: GgufValueType.ARRAY, itemType: GgufValueType.FLOAT32, value: [-1000, 0, 0.25] }],
  ['v.i32s', { type: GgufValueType.ARRAY, itemType: GgufValueType.INT32, value: [1, 3, -6] }],
  ['v.u8s', { type: GgufValueType.ARRAY, itemType: GgufValueType.UINT8, value: [0, 255] }],
  ['v.u64s', { type: GgufValueType.ARRAY, itemType: GgufValueType.UINT64, value: [0n, 2n ** 63n] }],
  ['v.bools', { type: GgufValueType.ARRAY, itemType: GgufValueType.BOOL, value: [true, false] }],
  ['v.f64s', { type: GgufValueType.ARRAY, itemType: GgufValueType.FLOAT64, value: [1e300] }],
];

/** Rewrites the ggml type of tensor `name` in encoded bytes (right after its name and dims). */
function setTensorType(bytes: Buffer, name: string, type: number): Buffer {
  const copy = Buffer.from(bytes);
  const nameBytes = Buffer.from(name);
  const lengthAndName = Buffer.concat([Buffer.alloc(8), nameBytes]);
  lengthAndName.writeBigUInt64LE(BigInt(nameBytes.length));
  const at = copy.indexOf(lengthAndName);
  assert.ok(at > 0, `tensor info of ${name} not found`);
  const dimsAt = at + lengthAndName.length;
  const nDims = copy.readUInt32LE(dimsAt);
  copy.writeUInt32LE(type, dimsAt + 4 + 8 * nDims);
  return copy;
}

/** Metadata configFromMetadata needs for a llama. */
function llamaMetadata(architecture: string): Map<string, GgufValue> {
  const key = (k: string) => `${architecture}.${k}`;
  return new Map<string, GgufValue>([
    ['general.architecture', str(architecture)],
    ['general.name', str('Tiny Test')],
    ['general.file_type', u32(15)],
    [key('context_length'), u32(512)],
    [key('embedding_length'), u32(256)],
    [key('block_count'), u32(1)],
    [key('attention.head_count'), u32(4)],
    [key('feed_forward_length'), u32(512)],
    [key('attention.layer_norm_rms_epsilon'), f32(1e-5)],
    [key('vocab_size'), u32(32)],
    ['tokenizer.chat_template', str('{{ messages }}')],
  ]);
}

describe('engine/gguf files', function () {
  this.timeout(60_000);

  it("reads a real vocabulary GGUF's header alone, equal to the whole-file decode", async () => {
    const path = vocabGguf('llama-bpe');
    const header = await readGgufHeader(path);
    const whole = decodeGguf(readFileSync(path));
    assert.ok(header.metadata.size > 10);
    assert.deepEqual([...header.metadata], [...whole.metadata]);
    const tokens = header.metadata.get('tokenizer.ggml.tokens');
    assert.ok(tokens?.type === GgufValueType.ARRAY && tokens.value.length > 100_000, 'a real 128k vocabulary, past the first read chunk');
  });

  it('writes every supported type, and reads each back dequantised (whole file, header, one tensor)', async () => {
    await withTempDir(async (dir) => {
      const file = fileOfEveryType();
      const path = join(dir, 'all.gguf');
      await writeGgufFile(path, file);
      const whole = await readGgufFile(path);
      const header = await readGgufHeader(path);
      const reader = await openGgufTensors(path);
      try {
        for (const [i, tensor] of file.tensors.entries()) {
          const type = tensor.type!;
          const expected = dequantize(type, quantize(type, tensor.data), tensor.data.length);
          const info = header.tensors[i];
          assert.deepEqual([info.name, info.dims, info.type], [tensor.name, [256, 3], type]);
          assert.equal(info.byteLength, (768 / ggmlTypeInfo(type).blockElements) * ggmlTypeInfo(type).blockBytes);
          assert.equal(info.offset % 32, 0);
          assert.deepEqual(whole.tensors[i].data, expected, tensor.name);
          assert.equal(whole.tensors[i].type, type === GgmlType.F32 ? undefined : type);
          assert.deepEqual(await reader.readF32(tensor.name), expected, tensor.name);
        }
      } finally {
        await reader.close();
      }
      // Writing what was read keeps every type, so the bytes are the same again.
      assert.deepEqual(encodeGguf(whole), readFileSync(path));
    });
  });

  it('writes and reads metadata of every value type', () => {
    const decoded = decodeGguf(encodeGguf({ metadata: new Map(EVERY_VALUE), tensors: [] }));
    assert.deepEqual([...decoded.metadata], EVERY_VALUE);
  });

  it('says a foreign file is not GGUF and a cut-off one is truncated, at every cut (never a RangeError)', async () => {
    const bytes = encodeGguf({ metadata: new Map(EVERY_VALUE), tensors: [{ name: 'w', dims: [32, 2], data: values(64, 1), type: GgmlType.Q8_0 }] });
    assert.throws(() => decodeGguf(Buffer.from('hello, not a model')), /^Error: not a GGUF file/);
    const dataStart = bytes.length - 96; // two Q8_0 blocks of 34 bytes, padded to 96
    for (let cut = 0; cut < dataStart - 32; cut++) {
      assert.throws(
        () => decodeGguf(bytes.subarray(0, cut)),
        (err: Error) => err.constructor === Error && /^truncated GGUF: /.test(err.message),
        `cut at ${cut}`,
      );
    }
    assert.throws(() => decodeGguf(bytes.subarray(0, bytes.length - 40)), {
      message: `truncated GGUF: tensor w needs bytes up to ${dataStart + 68} but the file has ${bytes.length - 40}`,
    });
    await withTempDir(async (dir) => {
      const path = join(dir, 'cut.gguf');
      writeFileSync(path, bytes.subarray(0, bytes.length - 40));
      const reader = await openGgufTensors(path);
      await assert.rejects(reader.readF32('w'), {
        message: `truncated GGUF: tensor w needs bytes up to ${dataStart + 68} but the file has ${bytes.length - 40}`,
      });
      await reader.close();
      writeFileSync(path, bytes.subarray(0, 300));
      await assert.rejects(readGgufHeader(path), /^Error: truncated GGUF: the header ends inside/);
      writeFileSync(path, Buffer.from('PK\x03\x04 a zip, not a model'));
      await assert.rejects(readGgufHeader(path), /^Error: not a GGUF file/);
    });
  });

  it('names the tensor, its type and the supported types when a type cannot be read', () => {
    const bytes = setTensorType(
      encodeGguf({ metadata: new Map(), tensors: [{ name: 'blk.0.ffn_up.weight', dims: [256], data: values(256, 2) }] }),
      'blk.0.ffn_up.weight',
      17,
    );
    assert.throws(
      () => decodeGguf(bytes),
      (err: Error) => {
        assert.ok(err instanceof UnsupportedTensorTypeError);
        assert.equal(err.message, 'tensor blk.0.ffn_up.weight has ggml type IQ2_XS; svc reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K');
        return true;
      },
    );
  });

  it('inspects a trainable quantised llama from its header', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'llama.gguf');
      await writeGgufFile(path, {
        metadata: llamaMetadata('llama'),
        tensors: [
          { name: 'token_embd.weight', dims: [256, 32], data: values(256 * 32, 3), type: GgmlType.Q4_K },
          { name: 'output_norm.weight', dims: [256], data: values(256, 4) },
        ],
      });
      assert.deepEqual(await inspectGguf(path), {
        architecture: 'llama',
        name: 'Tiny Test',
        parameters: 256 * 32 + 256,
        quantization: 'Q4_K_M',
        contextLength: 512,
        sizeBytes: readFileSync(path).length,
        hasChatTemplate: true,
        trainable: true,
      });
    });
  });

  it('inspects a gpt2 as serve-only, and names the dominant type when general.file_type is absent', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'gpt2.gguf');
      const metadata = llamaMetadata('gpt2');
      metadata.delete('general.file_type');
      await writeGgufFile(path, {
        metadata,
        tensors: [
          { name: 'token_embd.weight', dims: [256, 32], data: values(256 * 32, 3), type: GgmlType.Q8_0 },
          { name: 'output_norm.weight', dims: [256], data: values(256, 4) },
        ],
      });
      const facts = await inspectGguf(path);
      assert.equal(facts.trainable, false);
      assert.match(facts.notTrainableReason!, /"gpt2" models can be served but not fine-tuned/);
      assert.ok(!facts.notTrainableReason!.includes('\n'));
      assert.equal(facts.quantization, 'Q8_0');
    });
  });

  it('inspects a llama with an unsupported tensor type as serve-only, naming the tensor', async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, 'iq.gguf');
      const bytes = encodeGguf({ metadata: llamaMetadata('llama'), tensors: [{ name: 'token_embd.weight', dims: [256, 32], data: values(256 * 32, 3) }] });
      writeFileSync(path, setTensorType(bytes, 'token_embd.weight', 16));
      const facts = await inspectGguf(path);
      assert.equal(facts.trainable, false);
      assert.equal(facts.notTrainableReason, 'tensor token_embd.weight has ggml type IQ2_XXS; svc reads F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K');
    });
  });
});
