/**
 * The torch backend fails readably: a missing python, a python that dies at start, one that
 * prints something other than frames, a process killed in the middle of a step, and a request
 * the server rejects. Each error must name what went wrong, not just "EPIPE" or a hang.
 */
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTorchBackend, type TorchBackend } from '../../../engine/backends/torch/index.js';
import type { LoadProgress, TokenBatch } from '../../../engine/backends/types.js';
import { str } from '../../../engine/gguf/format.js';
import { readModelConfig } from '../../../engine/gguf/model-file.js';
import { writeGgufFile } from '../../../engine/gguf/writer.js';
import { initLoraTensors, loraSpec } from '../../../engine/lora.js';
import { packageRoot } from '../../../sdk/packageRoot.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { torchTestPython } from '../../support/torchStack.js';

const MODEL = path.join(packageRoot(), 'models', 'svc-tiny.gguf');

async function script(dir: TempDir, name: string, body: string): Promise<string> {
  const file = path.join(dir.path, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

function bigBatch(vocab: number): TokenBatch {
  const batchSize = 8;
  const length = 160;
  const size = batchSize * length;
  const inputs = Int32Array.from({ length: size }, (_, i) => (i * 7) % vocab);
  return { batchSize, length, inputs, targets: inputs.map((x) => (x + 1) % vocab), mask: new Float32Array(size).fill(1), maskedTokens: size, tokens: size };
}

describe('torch backend faults', function () {
  this.timeout(60000);
  let dir: TempDir;
  const savedPython = process.env.SVC_PYTHON;

  beforeEach(async () => {
    dir = await createTempDir('torch-faults');
  });
  afterEach(async () => {
    if (savedPython === undefined) delete process.env.SVC_PYTHON;
    else process.env.SVC_PYTHON = savedPython;
    await dir.remove();
  });

  it('a python that does not exist: the error names it', async () => {
    const missing = path.join(dir.path, 'no-such-python3');
    await assert.rejects(startTorchBackend({ python: missing }), (error: Error) => {
      assert.match(error.message, /python not found: .*no-such-python3/);
      return true;
    });
  });

  it('a python that exits at start: the error names it and quotes its stderr', async () => {
    const python = await script(dir, 'dying-python', 'echo "ImportError: libtorch_cpu.so: cannot open shared object file" >&2; exit 3');
    await assert.rejects(startTorchBackend({ python }), (error: Error) => {
      assert.match(error.message, /exited at start \(exit code 3\)/);
      assert.match(error.message, /dying-python/);
      assert.match(error.message, /libtorch_cpu\.so/);
      return true;
    });
  });

  it('SVC_PYTHON pointing at a program that prints text instead of frames', async () => {
    process.env.SVC_PYTHON = await script(dir, 'chatty-python', 'echo "Welcome to my Python wrapper! Type help for help."; cat > /dev/null');
    await assert.rejects(startTorchBackend(), (error: Error) => {
      assert.match(error.message, /not a frame on stdout/);
      assert.match(error.message, /Welcome to my Python wrapper/);
      assert.match(error.message, /chatty-python/);
      return true;
    });
  });

  it('kill -9 during a train_step rejects that step with the signal and the activity', async () => {
    const backend = await startTorchBackend({ python: torchTestPython() });
    try {
      const config = await readModelConfig(MODEL);
      await backend.loadBase(MODEL, config);
      const lora = { r: 8, alpha: 16, targetModules: ['q_proj', 'v_proj'] };
      await backend.initLora(loraSpec(lora), initLoraTensors(config, lora, 1).tensors);
      const step = backend.trainStep(bigBatch(config.vocabSize), {
        learningRate: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        epsilon: 1e-8,
        weightDecay: 0,
        maxGradNorm: 1,
      });
      process.kill(backend.pid!, 'SIGKILL');
      await assert.rejects(step, /the torch backend process exited \(SIGKILL\) while training/);
      // Later requests fail the same way at once instead of hanging on a dead pipe.
      await assert.rejects(backend.loraTensors(), /exited \(SIGKILL\)/);
    } finally {
      await backend.dispose();
    }
  });

  it('a request the server cannot do is rejected with its reason, and the process stays usable (and reports load progress)', async () => {
    const backend: TorchBackend = await startTorchBackend({ python: torchTestPython() });
    try {
      const config = await readModelConfig(MODEL);
      await assert.rejects(backend.loadBase(path.join(dir.path, 'missing.gguf'), config), /loading the model failed: .*missing\.gguf/);
      // An architecture transformers cannot build from a GGUF is named, with those it can.
      const unknown = path.join(dir.path, 'unknown-arch.gguf');
      await writeGgufFile(unknown, { metadata: new Map([['general.architecture', str('svc-unknown')]]), tensors: [] });
      await assert.rejects(
        backend.loadBase(unknown, config),
        /unknown-arch\.gguf: GGUF model with architecture svc-unknown is not supported yet\. \(transformers reads GGUF for: .*gemma3.*qwen3/,
      );
      const progress: LoadProgress[] = [];
      await backend.loadBase(MODEL, config, (p) => progress.push(p));
      // Progress arrives tensor by tensor and ends at the whole model.
      assert.ok(progress.length > 10);
      assert.ok(progress.every((p, i) => i === 0 || p.loadedBytes > progress[i - 1].loadedBytes));
      assert.equal(progress.at(-1)!.loadedBytes, progress.at(-1)!.totalBytes);
      assert.equal(progress.at(-1)!.tensor, 'output.weight');
      assert.match(backend.info.device, /^cpu \(\d+ threads\)$|^cuda|^mps/);
    } finally {
      await backend.dispose();
      await backend.dispose();
    }
  });
});
