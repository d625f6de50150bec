/**
 * Two machines, as two Linux network namespaces joined by a veth pair: node 0 (the worker's side)
 * and node 1 (`svc worker --nodes 2 --node-rank 1`, runTorchFollower) each run one rank under
 * torchrun, meeting at node 0's address over the veth link, and train the same steps as one
 * process at the doubled batch. Needs root (ip netns); skipped otherwise.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runTorchFollower } from '../../../engine/backends/torch/follower.js';
import { startTorchBackend, type TorchBackend } from '../../../engine/backends/torch/index.js';
import type { TorchRanks } from '../../../engine/backends/torch/ranks.js';
import { readChatJsonl } from '../../../engine/data/chat-jsonl.js';
import { trainLora } from '../../../engine/train/lora-trainer.js';
import { packageRoot } from '../../../sdk/packageRoot.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { requireTorchStack, torchTestPython } from '../../support/torchStack.js';

const MODEL = path.join(packageRoot(), 'models', 'svc-tiny.gguf');
const QUICKSTART = path.join(packageRoot(), 'examples', 'quickstart', 'data');
const TOLERANCE = 1e-5;
const A = `svc-a${process.pid}`;
const B = `svc-b${process.pid}`;
const LINK_A = `sva${process.pid}`;
const LINK_B = `svb${process.pid}`;
const ADDRESS_A = '10.231.0.1';
const ADDRESS_B = '10.231.0.2';

function ip(...args: string[]): void {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ip ${args.join(' ')}: ${run.stderr || run.error?.message}`);
}

function removeNamespaces(): void {
  for (const ns of [A, B]) spawnSync('ip', ['netns', 'del', ns]);
}

/** A "python" that runs the real one inside namespace `ns`, gloo on that namespace's veth end. */
async function pythonIn(dir: TempDir, ns: string, link: string): Promise<string> {
  const file = path.join(dir.path, `python-${ns}`);
  await writeFile(file, `#!/bin/sh\nGLOO_SOCKET_IFNAME=${link} exec ip netns exec ${ns} ${torchTestPython()} "$@"\n`);
  await chmod(file, 0o755);
  return file;
}

describe('torch ranks on two hosts (two network namespaces)', function () {
  this.timeout(300_000);
  let dir: TempDir;

  before(async function () {
    if (process.platform !== 'linux' || process.getuid?.() !== 0 || spawnSync('ip', ['netns', 'list']).status !== 0) {
      console.log('      skipped: needs root and ip netns');
      this.skip();
    }
    await requireTorchStack(this);
    dir = await createTempDir('torch-netns');
    removeNamespaces();
    ip('netns', 'add', A);
    ip('netns', 'add', B);
    ip('link', 'add', LINK_A, 'type', 'veth', 'peer', 'name', LINK_B);
    ip('link', 'set', LINK_A, 'netns', A);
    ip('link', 'set', LINK_B, 'netns', B);
    ip('-n', A, 'addr', 'add', `${ADDRESS_A}/24`, 'dev', LINK_A);
    ip('-n', B, 'addr', 'add', `${ADDRESS_B}/24`, 'dev', LINK_B);
    for (const [ns, link] of [
      [A, LINK_A],
      [B, LINK_B],
    ]) {
      ip('-n', ns, 'link', 'set', link, 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
  });
  after(async () => {
    removeNamespaces();
    await dir?.remove();
  });

  it('node 0 and node 1, one rank each, train as one process at the doubled batch', async () => {
    const train = (await readChatJsonl(path.join(QUICKSTART, 'train.jsonl'))).slice(0, 32);
    // A fresh namespace has every port free: any fixed one is safe there.
    const master = `${ADDRESS_A}:29511`;
    const ranks = (rank: number): TorchRanks => ({ perNode: 1, backend: 'gloo', nodes: { count: 2, rank, master } });
    const stop = new AbortController();
    const followerLog: string[] = [];
    const follower = runTorchFollower({ python: await pythonIn(dir, B, LINK_B), ranks: ranks(1), signal: stop.signal, log: (line) => followerLog.push(line) });
    const run = async (backend: TorchBackend, batchSize: number) => {
      const losses: number[] = [];
      try {
        await trainLora({
          baseModel: MODEL,
          backend,
          train,
          outputDir: path.join(dir.path, `out-${batchSize}`),
          maxSteps: 4,
          learningRate: 3e-3,
          batchSize,
          seed: 5,
          onLog: (e) => void losses.push(e.loss),
        });
        return { losses, worldSize: backend.info.worldSize };
      } finally {
        await backend.dispose();
      }
    };
    try {
      const two = await run(await startTorchBackend({ python: await pythonIn(dir, A, LINK_A), threads: 1, dtype: 'float32', ranks: ranks(0) }), 4);
      const one = await run(await startTorchBackend({ python: torchTestPython(), threads: 1, dtype: 'float32' }), 8);
      assert.equal(two.worldSize, 2);
      assert.ok(
        followerLog.some((line) => /rank 1 of 2, gloo/.test(line)),
        `node 1 ran rank 1:\n${followerLog.join('\n')}`,
      );
      assert.equal(two.losses.length, 4);
      two.losses.forEach((loss, i) =>
        assert.ok(Math.abs(loss - one.losses[i]) <= TOLERANCE * Math.max(1, one.losses[i]), `step ${i + 1}: two hosts ${loss}, one process ${one.losses[i]}`),
      );
    } finally {
      stop.abort();
      await follower;
    }
  });
});
