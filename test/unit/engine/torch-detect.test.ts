/**
 * detectTorch finds a Python with torch, transformers and peft in the documented order
 * (SVC_PYTHON, svc's venv, python3 on PATH, /usr/bin/python3) and, when none has them, says what
 * each candidate answered and how to set up. A Python found is remembered, and probed again when
 * the backend no longer starts with it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { chooseBackend } from '../../../engine/backends/select.js';
import { detectTorch, forgetTorchDetections, isTorchDetectionRemembered } from '../../../engine/backends/torch/detect.js';
import { torchVenvDir, torchVenvPython } from '../../../engine/backends/torch/venv.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';

describe('detectTorch', function () {
  this.timeout(60000);
  let dir: TempDir;
  const saved = { PATH: process.env.PATH, SVC_PYTHON: process.env.SVC_PYTHON, SVC_TORCH_VENV: process.env.SVC_TORCH_VENV, venv: torchVenvDir() };

  beforeEach(async () => {
    dir = await createTempDir('torch-detect');
  });
  afterEach(async () => {
    process.env.PATH = saved.PATH;
    if (saved.SVC_TORCH_VENV === undefined) delete process.env.SVC_TORCH_VENV;
    else process.env.SVC_TORCH_VENV = saved.SVC_TORCH_VENV;
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

  it("finds svc's venv before a python3 on PATH, and a python3 on PATH with the stack when there is no venv", async () => {
    delete process.env.SVC_PYTHON;
    await pathPythonWithoutTorch();
    const found = await detectTorch();
    assert.ok(found.ok, found.ok ? '' : found.reason);
    assert.equal(found.python, torchVenvPython());
    assert.match(found.torchVersion, /^\d+\.\d+/);
    assert.match(found.transformersVersion, /^\d+\.\d+/);
    assert.match(found.device, /^(cpu|cuda|mps)$/);

    // No venv where SVC_TORCH_VENV points: the PATH's python3 (here a script that runs the venv's) is next.
    process.env.SVC_TORCH_VENV = path.join(dir.path, 'no-venv');
    const linked = path.join(dir.path, 'linked');
    await mkdir(linked);
    await writeFile(path.join(linked, 'python3'), `#!/bin/sh\nexec "${torchVenvPython(saved.venv)}" "$@"\n`);
    await chmod(path.join(linked, 'python3'), 0o755);
    process.env.PATH = `${linked}:${saved.PATH}`;
    const fromPath = await detectTorch();
    assert.ok(fromPath.ok && fromPath.python === 'python3', JSON.stringify(fromPath));
  });

  it('says which module is missing and how to set up when no candidate has the stack', async () => {
    process.env.SVC_TORCH_VENV = path.join(dir.path, 'no-venv');
    const found = await detectTorch(path.join(dir.path, 'python3'));
    assert.equal(found.ok, false);
    await pathPythonWithoutTorch();
    const noTorch = await detectTorch(path.join(dir.path, 'python3'));
    assert.match(!noTorch.ok ? noTorch.reason : '', /svc setup torch/);
  });

  it('SVC_PYTHON comes first when it has the stack', async () => {
    await pathPythonWithoutTorch();
    process.env.SVC_PYTHON = torchVenvPython();
    const found = await detectTorch();
    assert.ok(found.ok && found.python === torchVenvPython());
  });

  /**
   * A stand-in Python (a test double: a real one cannot be made to lose its stack between two
   * jobs) that answers the probe as one with the stack would, counts the probes in a file, and
   * cannot start the backend itself.
   */
  async function countingPython(): Promise<{ python: string; probes: () => Promise<number> }> {
    const python = path.join(dir.path, 'counting-python');
    const count = path.join(dir.path, 'probes');
    await writeFile(
      python,
      `#!/bin/sh\nif [ "$1" = "-c" ]; then echo probe >> "${count}"; echo "SVC_TORCH_PROBE 2.13.0 cpu 5.18.0 0.21.0"; exit 0; fi\necho "ModuleNotFoundError: No module named 'peft'" >&2\nexit 1\n`,
    );
    await chmod(python, 0o755);
    const probes = async () => (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    return { python, probes };
  }

  it('remembers a Python it found, so later jobs start without a probe; forgetting probes again', async () => {
    const { python, probes } = await countingPython();
    forgetTorchDetections();
    const first = await detectTorch(python);
    const second = await detectTorch(python);
    assert.ok(first.ok && second.ok && second.python === python, JSON.stringify(second));
    assert.equal(await probes(), 1);
    assert.ok(isTorchDetectionRemembered(python));
    forgetTorchDetections();
    assert.ok(!isTorchDetectionRemembered(python));
    await detectTorch(python);
    assert.equal(await probes(), 2);
  });

  it('a remembered Python whose backend no longer starts is probed again before the job fails', async () => {
    const { python, probes } = await countingPython();
    forgetTorchDetections();
    await detectTorch(python);
    assert.equal(await probes(), 1);
    await assert.rejects(chooseBackend('torch', { python }), /peft/);
    // Once from memory, then probed again after the failed start, which failed the same way.
    assert.equal(await probes(), 2);
  });

  it('a Python found is kept on disk: the next process starts without a probe until the install changes', async () => {
    const { python, probes } = await countingPython();
    // The stand-in prints the paths a real probe prints: the interpreter and a site-packages folder.
    const site = path.join(dir.path, 'site-packages');
    await mkdir(site);
    const script = await readFile(python, 'utf8');
    await writeFile(python, script.replace('exit 0; fi', `echo 'SVC_TORCH_PATHS ["${python}", "${site}"]'; exit 0; fi`));
    const detectFromNewProcess = async () => {
      const code = `import { detectTorch } from ${JSON.stringify(path.resolve('engine/backends/torch/detect.ts'))}; const found = await detectTorch(${JSON.stringify(python)}); console.log(JSON.stringify(found));`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', code], {
        env: { ...process.env, XDG_CACHE_HOME: path.join(dir.path, 'cache') },
      });
      const found = JSON.parse(stdout.trim().split('\n').pop()!);
      assert.ok(found.ok && found.torchVersion === '2.13.0', stdout);
    };
    await detectFromNewProcess();
    await detectFromNewProcess();
    assert.equal(await probes(), 1, 'the second process answers from disk');
    // A package installed or removed changes its site-packages folder: the next process probes again.
    await writeFile(path.join(site, 'new_package.pth'), '');
    await detectFromNewProcess();
    await detectFromNewProcess();
    assert.equal(await probes(), 2);
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
