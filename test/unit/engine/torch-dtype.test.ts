/**
 * The torch backend's dtype choice (`svc_torch/device.py compute_dtype`): 'auto' is bfloat16 on
 * CUDA and on CPUs that compute bfloat16 in hardware (AVX512-BF16, AMX, Arm BF16), float32
 * elsewhere; an explicit dtype wins, SVC_TORCH_DTYPE when none is given. Runs the real Python
 * module, and the real backend process for what it reports on this machine.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTorchBackend } from '../../../engine/backends/torch/index.js';
import { torchPythonPath } from '../../../engine/backends/torch/paths.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { torchTestPython } from '../../support/torchStack.js';

function python(code: string, env: Record<string, string | undefined> = {}): unknown {
  const result = spawnSync(torchTestPython(), ['-c', `import json, os, torch\nimport svc_torch.device as d\n${code}`], {
    cwd: torchPythonPath(),
    encoding: 'utf8',
    env: { ...process.env, SVC_TORCH_DTYPE: undefined, ...env },
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

/** What Linux says of this CPU's bfloat16 support, read here independently of the module under test. */
function cpuinfoSaysBf16(): boolean | undefined {
  if (!existsSync('/proc/cpuinfo')) return undefined;
  return /^(flags|features)\s*:.*\b(avx512_bf16|amx_bf16|bf16)\b/im.test(readFileSync('/proc/cpuinfo', 'utf8'));
}

describe('torch dtype choice', function () {
  this.timeout(120_000);
  let dir: TempDir;
  before(async () => {
    dir = await createTempDir('torch-dtype');
  });
  after(async () => {
    await dir?.remove();
  });

  it("'auto' on CPU: bfloat16 where the CPU has it in hardware, float32 where it does not; explicit choices win", () => {
    const cpu = 'torch.device("cpu")';
    const chosen = python(`print(json.dumps([d.dtype_name(x) for x in [
      d.compute_dtype(${cpu}, None, cpu_bf16=True), d.compute_dtype(${cpu}, "auto", cpu_bf16=False),
      d.compute_dtype(${cpu}, "float32", cpu_bf16=True), d.compute_dtype(${cpu}, "bfloat16", cpu_bf16=False),
      d.compute_dtype(torch.device("mps"), "auto", cpu_bf16=True)]]))`);
    assert.deepEqual(chosen, ['bfloat16', 'float32', 'float32', 'bfloat16', 'float32']);
  });

  it('SVC_TORCH_DTYPE is the choice when load names none; unknown names and float16 on CPU are refused', () => {
    assert.equal(
      python('print(json.dumps(d.dtype_name(d.compute_dtype(torch.device("cpu"), None, cpu_bf16=True))))', { SVC_TORCH_DTYPE: 'float32' }),
      'float32',
    );
    const refused = python(`out = []
for name in ["fp8", "float16"]:
    try:
        d.compute_dtype(torch.device("cpu"), name)
        out.append(None)
    except ValueError as err:
        out.append(str(err))
print(json.dumps(out))`) as (string | null)[];
    assert.match(refused[0] ?? '', /unknown dtype 'fp8' \(expected one of auto, float32, bfloat16, float16\)/);
    assert.match(refused[1] ?? '', /float16 is not supported on CPU/);
  });

  it('reads bfloat16 support from cpuinfo flags (x86 and Arm), and a missing file as none', () => {
    const files = {
      x86bf16: 'processor : 0\nflags : fpu sse avx2 avx512f avx512_bf16 amx_tile\n',
      x86plain: 'processor : 0\nflags : fpu sse avx2 avx512f avx512_vnni\n',
      armbf16: 'processor : 0\nFeatures : fp asimd sve bf16 i8mm\n',
    };
    const paths = Object.entries(files).map(([name, text]) => {
      const file = path.join(dir.path, name);
      writeFileSync(file, text);
      return file;
    });
    paths.push(path.join(dir.path, 'missing'));
    assert.deepEqual(python(`print(json.dumps([d.cpuinfo_has_bf16(p) for p in ${JSON.stringify(paths)}]))`), [true, false, true, false]);
  });

  it("the backend's default dtype on this machine is the one its CPU flags call for", async function () {
    const expected = cpuinfoSaysBf16();
    if (expected === undefined) this.skip(); // no /proc/cpuinfo to check against
    const backend = await startTorchBackend({ python: torchTestPython() });
    try {
      assert.equal(backend.info.dtype, expected ? 'bfloat16' : 'float32', `cpuinfo ${expected ? 'lists' : 'does not list'} bfloat16`);
    } finally {
      await backend.dispose();
    }
  });
});
