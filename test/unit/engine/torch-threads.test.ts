/**
 * How many threads the torch process trains with (`svc_torch/device.py configure_threads`): the
 * cores it may really use (affinity mask, cgroup CPU quota), less one for the cloud beside it when
 * there are more than 2; SVC_TORCH_THREADS wins. Runs the real Python module under the Python the
 * torch tests use.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { torchPythonPath } from '../../../engine/backends/torch/paths.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { torchTestPython } from '../../support/torchStack.js';

/** Runs `code` with svc_torch.device imported as `d`; returns what it printed as JSON. */
function python(code: string, env: Record<string, string | undefined> = {}): unknown {
  const result = spawnSync(torchTestPython(), ['-c', `import json, os\nimport svc_torch.device as d\n${code}`], {
    cwd: torchPythonPath(),
    encoding: 'utf8',
    env: { ...process.env, SVC_TORCH_THREADS: undefined, ...env },
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(result.stdout);
}

describe('torch thread count', function () {
  this.timeout(120_000);
  let dir: TempDir;
  before(async () => {
    dir = await createTempDir('torch-threads');
  });
  after(async () => {
    await dir?.remove();
  });

  /** A cgroup folder holding these files (v2 `cpu.max`, or v1's `cpu/cpu.cfs_*_us`). */
  function cgroup(name: string, files: Record<string, string>): string {
    const root = path.join(dir.path, name);
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), content + '\n');
    }
    return root;
  }

  it('leaves one core to the cloud when there are more than 2', () => {
    assert.deepEqual(python('print(json.dumps([d.training_threads(n) for n in [1, 2, 3, 4, 16]]))'), [1, 2, 2, 3, 15]);
  });

  it('reads the cgroup CPU quota, v2 and v1, and treats "max" and -1 as no limit', () => {
    const roots = [
      cgroup('v2-unlimited', { 'cpu.max': 'max 100000' }),
      cgroup('v2-one-and-a-half', { 'cpu.max': '150000 100000' }),
      cgroup('v1-unlimited', { 'cpu/cpu.cfs_quota_us': '-1', 'cpu/cpu.cfs_period_us': '100000' }),
      cgroup('v1-two', { 'cpu/cpu.cfs_quota_us': '200000', 'cpu/cpu.cfs_period_us': '100000' }),
      path.join(dir.path, 'no-cgroup-files'),
    ];
    assert.deepEqual(python(`print(json.dumps([d.cgroup_cpu_quota(root) for root in ${JSON.stringify(roots)}]))`), [null, 1.5, null, 2, null]);
  });

  it('counts the cores of its affinity mask, capped by the cgroup quota', function () {
    if (process.platform !== 'linux') this.skip(); // sched_setaffinity is Linux's
    const half = cgroup('v2-half', { 'cpu.max': '50000 100000' });
    const [pinned, capped] = python(
      `os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\npinned = d.usable_cpus("${path.join(dir.path, 'no-cgroup-files')}")\n` +
        `os.sched_setaffinity(0, set(range(os.cpu_count())))\nprint(json.dumps([pinned, d.usable_cpus(${JSON.stringify(half)})]))`,
    ) as number[];
    assert.equal(pinned, 1, 'a process pinned to one core counts one, whatever os.cpu_count() says');
    assert.equal(capped, 1, 'half a core of quota is one thread');
  });

  it('trains with the threads its affinity allows, and SVC_TORCH_THREADS wins', function () {
    if (process.platform !== 'linux') this.skip();
    const pinned = python('os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\nprint(json.dumps([os.cpu_count(), d.configure_threads()]))') as number[];
    assert.equal(pinned[1], 1, `pinned to one core of ${pinned[0]}`);
    assert.equal(python('os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\nprint(json.dumps(d.configure_threads()))', { SVC_TORCH_THREADS: '3' }), 3);
  });
});
