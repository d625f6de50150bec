import assert from 'node:assert/strict';
import { join } from 'node:path';
import { initTf } from '../../../engine/backend.js';
import { loadAdapterGguf, saveAdapter } from '../../../engine/gguf/adapter-file.js';
import { GgufValueType, f32, str, strArray, u32, i32Array, type GgufFile } from '../../../engine/gguf/format.js';
import { loadModelGguf, saveModelGguf } from '../../../engine/gguf/model-file.js';
import { decodeGguf } from '../../../engine/gguf/reader.js';
import { encodeGguf } from '../../../engine/gguf/writer.js';
import { initLora } from '../../../engine/lora.js';
import { TEST_TINY } from '../../../engine/model/config.js';
import { initWeights } from '../../../engine/model/weights.js';
import { tf } from '../../../engine/backend.js';
import { readFile } from 'node:fs/promises';
import { withTempDir } from '../../fixtures/engine/tiny-model.js';

function assertTensorsEqual(actual: Record<string, tf.Tensor>, expected: Record<string, tf.Tensor>): void {
  assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort());
  for (const name of Object.keys(expected)) {
    assert.deepEqual(actual[name].shape, expected[name].shape, name);
    assert.deepEqual(Array.from(actual[name].dataSync()), Array.from(expected[name].dataSync()), name);
  }
}

describe('engine/gguf', () => {
  before(async () => {
    await initTf();
  });

  it('encodes and decodes metadata of every kind and F32 tensors, with 32-byte aligned data', () => {
    const file: GgufFile = {
      metadata: new Map([
        ['a.u32', u32(7)],
        ['a.f32', f32(0.5)],
        ['a.str', str('héllo')],
        ['a.strs', strArray(['x', '', 'ÿ'])],
        ['a.ints', i32Array([-1, 2])],
      ]),
      tensors: [
        { name: 't1', dims: [3], data: Float32Array.from([1, 2, 3]) },
        { name: 't2', dims: [2, 2], data: Float32Array.from([-1, 0.25, 8, 9]) },
      ],
    };
    const decoded = decodeGguf(encodeGguf(file));
    assert.deepEqual([...decoded.metadata], [...file.metadata]);
    assert.deepEqual(
      decoded.tensors.map((t) => [t.name, t.dims, Array.from(t.data)]),
      file.tensors.map((t) => [t.name, t.dims, Array.from(t.data)]),
    );
  });

  it('round-trips a model: write -> read gives the same config and weights', async () => {
    await withTempDir(async (dir) => {
      const weights = initWeights(TEST_TINY, 11);
      const path = join(dir, 'm.gguf');
      await saveModelGguf(path, TEST_TINY, weights);
      const loaded = await loadModelGguf(path);
      assert.deepEqual(loaded.config, { ...TEST_TINY, rmsNormEpsilon: Math.fround(TEST_TINY.rmsNormEpsilon) });
      assertTensorsEqual(loaded.weights, weights);
      const raw = decodeGguf(await readFile(path));
      assert.equal(raw.metadata.get('general.architecture')?.value, 'llama');
      assert.equal(raw.metadata.get('tokenizer.ggml.model')?.value, 'gpt2');
      const tokens = raw.metadata.get('tokenizer.ggml.tokens');
      assert.ok(tokens?.type === GgufValueType.ARRAY && tokens.value.length === TEST_TINY.vocabSize);
      // ggml lists the input dimension first: attn_q is [in, out], ffn_down [ff, d], embedding [d, vocab].
      const dims = new Map(raw.tensors.map((t) => [t.name, t.dims]));
      assert.deepEqual(dims.get('blk.0.ffn_down.weight'), [TEST_TINY.feedForwardLength, TEST_TINY.embeddingLength]);
      assert.deepEqual(dims.get('token_embd.weight'), [TEST_TINY.embeddingLength, TEST_TINY.vocabSize]);
    });
  });

  it('round-trips a LoRA adapter and writes PEFT adapter_config.json', async () => {
    await withTempDir(async (dir) => {
      const adapter = initLora(TEST_TINY, { r: 4, alpha: 8, targetModules: ['q', 'v_proj', 'down_proj'] }, 5);
      // Make B non-zero so the test would notice a transposition mistake.
      for (const name of Object.keys(adapter.weights)) {
        if (name.endsWith('lora_b')) {
          const shape = adapter.weights[name].shape;
          adapter.weights[name].dispose();
          adapter.weights[name] = tf.randomNormal(shape, 0, 1, 'float32', 9);
        }
      }
      await saveAdapter(adapter, 'svc-test', join(dir, 'a.gguf'), join(dir, 'adapter_config.json'));
      const loaded = await loadAdapterGguf(join(dir, 'a.gguf'), TEST_TINY);
      assert.equal(loaded.config.r, 4);
      assert.equal(loaded.config.alpha, 8);
      assert.equal(loaded.scaling, 2);
      assertTensorsEqual(loaded.weights, adapter.weights);
      const config = JSON.parse(await readFile(join(dir, 'adapter_config.json'), 'utf8'));
      assert.equal(config.r, 4);
      assert.equal(config.lora_alpha, 8);
      assert.deepEqual(config.target_modules, ['q_proj', 'v_proj', 'down_proj']);
      assert.equal(config.base_model_name_or_path, 'svc-test');
      const raw = decodeGguf(await readFile(join(dir, 'a.gguf')));
      assert.equal(raw.metadata.get('general.type')?.value, 'adapter');
      assert.equal(raw.metadata.get('adapter.type')?.value, 'lora');
      const dims = new Map(raw.tensors.map((t) => [t.name, t.dims]));
      assert.deepEqual(dims.get('blk.0.ffn_down.weight.lora_a'), [TEST_TINY.feedForwardLength, 4]);
      assert.deepEqual(dims.get('blk.0.ffn_down.weight.lora_b'), [4, TEST_TINY.embeddingLength]);
    });
  });
});
