/**
 * The torch backend's own GGUF reader dequantises every type it claims (F32, F16, BF16, Q8_0,
 * Q4_0, Q4_K, Q5_K, Q6_K) exactly as llama.cpp's gguf-py does, and names the tensor and type it
 * cannot read. The comparison runs in real Python (torch-gguf-reference.py).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { torchPythonPath } from '../../../engine/backends/torch/paths.js';
import { ggufPyPath } from '../../support/llamaCppSource.js';
import { createTempDir } from '../../support/tmp.js';
import { torchTestPython } from './torch-support.js';

const run = promisify(execFile);

describe('torch backend GGUF reader', function () {
  this.timeout(120000);

  it('dequantises like gguf-py for every supported type, and names an unsupported one', async () => {
    const dir = await createTempDir('torch-gguf');
    try {
      const script = path.join(import.meta.dirname, 'torch-gguf-reference.py');
      // No .pyc files next to the sources (the backend's own process runs with this too).
      const env = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };
      const { stdout } = await run(torchTestPython(), [script, ggufPyPath(), torchPythonPath(), dir.path], { env });
      const result = JSON.parse(stdout.trim().split('\n').pop()!);
      assert.deepEqual(Object.keys(result.maxDiff).sort(), ['bf16', 'f16', 'f32', 'q4_0', 'q4_k', 'q5_k', 'q6_k', 'q8_0']);
      for (const [name, diff] of Object.entries(result.maxDiff as Record<string, number>)) {
        assert.ok(result.maxAbs[name] > 0.01, `${name}: reference values are all near zero`);
        assert.ok(diff <= 1e-6 * result.maxAbs[name], `${name}: max difference ${diff} (values up to ${result.maxAbs[name]})`);
      }
      assert.match(result.unsupported, /tensor q5_0 has type Q5_0, which the torch backend cannot read \(supported: .*Q6_K/);
    } finally {
      await dir.remove();
    }
  });
});
