/**
 * One Python process of the torch backend and the requests in flight to it. Replies are matched
 * to requests by id; when the process dies, or writes something that is not a frame, every
 * pending request is rejected with a sentence that names the python, what it was doing and the
 * tail of its stderr (where Python puts tracebacks and the kernel's OOM kill leaves no trace).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { encodeFrame, FrameDecoder, FramingError, type Frame, type WireTensor } from './framing.js';
import { torchPythonPath } from './paths.js';
import { torchProcessEnv } from './env.js';
import { rankFailure, ranksEnv, torchrunArgs, worldSize, type TorchRanks } from './ranks.js';

export interface TorchProcessOptions {
  python: string;
  device?: string;
  threads?: number;
  log?: (line: string) => void;
  /** Several data-parallel ranks under torchrun (ranks.ts); absent: one process, as always. */
  ranks?: TorchRanks;
}

interface Pending {
  op: string;
  resolve: (frame: Frame) => void;
  reject: (error: Error) => void;
  onProgress?: (progress: Record<string, unknown>) => void;
}

/** What a request was doing, for "exited while …" messages. */
const ACTIVITY: Record<string, string> = {
  hello: 'starting',
  load: 'loading the model',
  init_lora: 'installing the LoRA tensors',
  train_step: 'training',
  grads: 'computing gradients',
  eval: 'evaluating',
  get_lora: 'reading the LoRA tensors',
  memory: 'reporting memory',
  shutdown: 'shutting down',
};

const STDERR_TAIL_BYTES = 4000;

export class TorchProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly decoder = new FrameDecoder();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stderrTail = '';
  private lineBuffer = '';
  private started = false;
  /** Set once the process can take no more requests; later requests reject with it. */
  private failure?: Error;
  readonly exited: Promise<void>;

  constructor(private readonly options: TorchProcessOptions) {
    const ranks = options.ranks;
    const env = torchProcessEnv({
      ...(ranks ? ranksEnv(ranks) : {}),
      SVC_TORCH_DEVICE: options.device || (ranks ? ranksEnv(ranks).SVC_TORCH_DEVICE : undefined),
      SVC_TORCH_THREADS: options.threads ? String(options.threads) : undefined,
    });
    const entry = path.join(torchPythonPath(), 'svc_torch_server.py');
    // torchrun starts in the python folder, so a stray torch.py in the caller's directory cannot shadow torch.
    const args = ranks ? ['-m', 'torch.distributed.run', ...torchrunArgs(ranks), entry] : [entry];
    this.child = spawn(options.python, args, { env, stdio: ['pipe', 'pipe', 'pipe'], ...(ranks ? { cwd: torchPythonPath() } : {}) });
    this.child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => this.onStderr(chunk));
    // A dead process makes writes fail with EPIPE; the exit handler reports it better.
    this.child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.on('error', (error: NodeJS.ErrnoException) => {
        const why = error.code === 'ENOENT' ? `python not found: ${options.python}` : `cannot start ${options.python}: ${error.message}`;
        this.fail(new Error(`${why}; install Python 3 with torch or set SVC_PYTHON to one that has it`));
        resolve();
      });
      this.child.on('close', (code, signal) => {
        const how = signal ? signal : `exit code ${code}`;
        const doing = this.started ? this.currentActivity() : 'starting';
        const failedRank = ranks && rankFailure(this.stderrTail, worldSize(ranks));
        if (failedRank) {
          this.fail(new Error(`the torch backend's ${failedRank} while ${doing}${this.stderrSuffix()}`));
          return resolve();
        }
        const prefix = this.started
          ? `the torch backend process exited (${how}) while ${doing}`
          : `the torch backend (${options.python}) exited at start (${how})`;
        this.fail(new Error(`${prefix}; python: ${options.python}${this.stderrSuffix()}`));
        resolve();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends one request and resolves with its reply frame (rejects on {ok:false} or process death). */
  request(op: string, fields: Record<string, unknown> = {}, tensors: WireTensor[] = [], onProgress?: Pending['onProgress']): Promise<Frame> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<Frame>((resolve, reject) => {
      this.pending.set(id, { op, resolve, reject, onProgress });
      this.child.stdin.write(encodeFrame({ ...fields, id, op }, tensors));
    });
  }

  /** Marks the handshake done: from now on a death is "while <activity>", not "at start". */
  markStarted(): void {
    this.started = true;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Closing stdin is the polite way to stop: the server ends at end of input. */
  closeInput(): void {
    this.child.stdin.end();
  }

  private currentActivity(): string {
    const ops = [...this.pending.values()].map((p) => ACTIVITY[p.op] ?? p.op);
    return ops[0] ?? 'idle';
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim();
    return tail ? `; stderr: ${tail.split('\n').slice(-12).join('\n')}` : '; stderr was empty';
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(error);
    }
  }

  private onStdout(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      if (!(error instanceof FramingError)) throw error;
      this.fail(
        new Error(
          `the torch backend (${this.options.python}) wrote something that is not a frame on stdout: ${error.message}; is ${this.options.python} a Python with svc's torch backend?`,
        ),
      );
      this.kill();
      return;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private onFrame(frame: Frame): void {
    const id = frame.header.id as number;
    const p = this.pending.get(id);
    if (!p) return;
    if (frame.header.progress) {
      p.onProgress?.(frame.header.progress as Record<string, unknown>);
      return;
    }
    this.pending.delete(id);
    if (frame.header.ok) p.resolve(frame);
    else p.reject(new Error(`torch backend: ${ACTIVITY[p.op] ?? p.op} failed: ${String(frame.header.error)}`));
  }

  private onStderr(chunk: Buffer): void {
    const text = chunk.toString('utf8');
    this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_BYTES);
    if (!this.options.log) return;
    this.lineBuffer += text;
    const lines = this.lineBuffer.split('\n');
    this.lineBuffer = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) this.options.log(line);
  }
}
