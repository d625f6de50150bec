/**
 * detectTorch finds a Python with torch in the documented order (SVC_PYTHON, python3 on PATH,
 * /usr/bin/python3) and, when none has it, says what each candidate answered.
 */
import assert from 'node:assert/strict';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { detectTorch } from '../../../engine/backends/torch/detect.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';

describe('detectTorch', function () {
  this.timeout(60000);
  let dir: TempDir;
  const saved = { PATH: process.env.PATH, SVC_PYTHON: process.env.SVC_PYTHON };

  beforeEach(async () => {
    dir = await createTempDir('torch-detect');
  });
  afterEach(async () => {
    process.env.PATH = saved.PATH;
    if (saved.SVC_PYTHON === undefined) delete process.env.SVC_PYTHON;
    else process.env.SVC_PYTHON = saved.SVC_PYTHON;
    await dir.remove();
  });

  /** A python3 on PATH that has no torch, as pyenv's and most venvs' are. */
  async function pathPythonWithoutTorch(): Promise<void> {
    const file = path.join(dir.path, 'python3');
    await writeFile(file, `#!/bin/sh\necho "ModuleNotFoundError: No module named 'torch'" >&2\nexit 1\n`);
    await chmod(file, 0o755);
    process.env.PATH = `${dir.path}:${saved.PATH}`;
  }

  it('skips a python3 on PATH without torch and picks /usr/bin/python3', async () => {
    delete process.env.SVC_PYTHON;
    await pathPythonWithoutTorch();
    const found = await detectTorch();
    assert.ok(found.ok, found.ok ? '' : found.reason);
    assert.equal(found.python, '/usr/bin/python3');
    assert.match(found.torchVersion, /^\d+\.\d+/);
    assert.match(found.device, /^(cpu|cuda|mps)$/);
  });

  it('SVC_PYTHON comes first when it has torch', async () => {
    await pathPythonWithoutTorch();
    process.env.SVC_PYTHON = '/usr/bin/python3';
    const found = await detectTorch();
    assert.ok(found.ok && found.python === '/usr/bin/python3');
  });

  it('an explicit python is the only candidate, and the reason names it and its answer', async () => {
    const missing = path.join(dir.path, 'nowhere', 'python');
    const found = await detectTorch(missing);
    assert.equal(found.ok, false);
    assert.match(!found.ok ? found.reason : '', new RegExp(`${missing.replace(/[/.]/g, '\\$&')}: not found`));
    await pathPythonWithoutTorch();
    const noTorch = await detectTorch(path.join(dir.path, 'python3'));
    assert.match(!noTorch.ok ? noTorch.reason : 'found', /python3: ModuleNotFoundError: No module named 'torch'/);
  });
});
