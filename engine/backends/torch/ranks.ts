/**
 * One training job on several processes: the torch backend's server started under torchrun
 * (torch.distributed.run) as data-parallel ranks. Rank 0 speaks the protocol on stdin/stdout; the
 * others take its requests by broadcast (python/svc_torch/distributed.py). The user's batchSize is
 * per rank, so a step trains on batchSize × worldSize examples (lora-trainer.ts).
 */

export interface TorchRanks {
  /** Processes on this machine: CPU processes (gloo) or one per GPU (nccl). */
  perNode: number;
  backend: 'gloo' | 'nccl';
  /** ddp (the default): every rank holds the whole base; fsdp: each decoder layer's base weights are sharded across the ranks (python/svc_torch/fsdp.py). */
  strategy?: 'ddp' | 'fsdp';
  /** Several machines: how many, this one's index (0 is the one that talks to the cloud), and where node 0 listens (host:port). */
  nodes?: { count: number; rank: number; master: string };
}

export function worldSize(ranks: TorchRanks): number {
  return ranks.perNode * (ranks.nodes?.count ?? 1);
}

/** `host:port` (an IPv6 host in brackets) split, or an error that names the flag. */
export function parseMaster(value: string, source = '--master'): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port > 0 && port < 65536)) throw new Error(`${source} must be host:port (node 0's address and a free port), not "${value}"`);
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/** torch.distributed.run's arguments before the script: one machine rendezvous on a free local port, several at node 0's address. */
export function torchrunArgs(ranks: TorchRanks): string[] {
  const common = [`--nproc-per-node=${ranks.perNode}`, '--max-restarts=0'];
  if (!ranks.nodes) return ['--standalone', ...common];
  const { host, port } = parseMaster(ranks.nodes.master);
  return [`--nnodes=${ranks.nodes.count}`, `--node-rank=${ranks.nodes.rank}`, `--master-addr=${host}`, `--master-port=${port}`, ...common];
}

/** The environment every rank needs on top of the backend's own (env.ts). */
export function ranksEnv(ranks: TorchRanks): Record<string, string> {
  return {
    SVC_TORCH_DIST_BACKEND: ranks.backend,
    SVC_TORCH_STRATEGY: ranks.strategy ?? 'ddp',
    ...(ranks.backend === 'gloo' ? { SVC_TORCH_DEVICE: 'cpu' } : {}),
    // FSDP allocates and frees each layer's gathered weights every pass. glibc raises its mmap
    // threshold to the largest block freed, so those blocks then come from the heap, which keeps
    // them: on CPU a rank grew past DDP's memory. A fixed threshold (which also stops the raising)
    // returns them at once. A value the user set is kept.
    ...(ranks.strategy === 'fsdp' && process.env.MALLOC_MMAP_THRESHOLD_ === undefined ? { MALLOC_MMAP_THRESHOLD_: String(128 * 1024) } : {}),
  };
}

/** The ranks in words for logs and training.started's reason: "gloo", "nccl, FSDP". */
export function describeRanks(ranks: TorchRanks): string {
  return ranks.strategy === 'fsdp' ? `${ranks.backend}, FSDP` : ranks.backend;
}

/**
 * torchrun's report of the ranks that failed (its ChildFailedError summary: "Failures:" and "Root
 * Cause") as one sentence, e.g. "rank 1 of 2 failed (Signal 9 (SIGKILL) received by PID 4242)";
 * undefined when the text holds no such report. A rank killed by a signal is named over the "first
 * observed" one: when a rank dies, its peers fail in their next collective and may be observed first.
 */
export function rankFailure(stderr: string, world: number): string | undefined {
  const rootCause = stderr.lastIndexOf('Root Cause');
  if (rootCause < 0) return undefined;
  const failures = stderr.lastIndexOf('Failures:', rootCause);
  const entries = [stderr.slice(rootCause), ...(failures >= 0 ? stderr.slice(failures, rootCause).split(/^\s*\[\d+\]:\s*$/m) : [])]
    .map(rankEntry)
    .filter((entry) => entry !== undefined);
  const failed = entries.find((entry) => entry.signal) ?? entries[0];
  if (!failed) return undefined;
  return `rank ${failed.rank} of ${world} failed (${failed.why}); torchrun stopped the other ranks`;
}

/** One rank's entry of torchrun's report: its rank and why it ended (a signal, else its exit code). */
function rankEntry(text: string): { rank: string; why: string; signal: boolean } | undefined {
  const field = (name: string) => new RegExp(`^\\s*${name}\\s*:\\s*(.+)$`, 'm').exec(text)?.[1].trim();
  const rank = field('rank')?.match(/^(\d+)/)?.[1];
  if (rank === undefined) return undefined;
  const exitcode = field('exitcode')?.match(/^(-?\d+)/)?.[1];
  const traceback = field('traceback');
  const signal = traceback !== undefined && /^Signal \d+/.test(traceback);
  return { rank, signal, why: signal && traceback ? traceback : exitcode !== undefined ? `exit code ${exitcode}` : 'unknown cause' };
}
