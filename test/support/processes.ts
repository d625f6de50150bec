// Child processes for tests: each runs in its own process group so that stopping it also stops
// everything it started (code-server's extension host, postgres backends, worker processes);
// otherwise grandchildren outlive the test and hold ports and files.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { pollUntil, withTimeout } from "./poll.js";

export interface SpawnOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Copy the child's output to this process's stdout/stderr, each line prefixed with `[name]`. */
  echo?: boolean;
  /** Label for messages and echoed lines; defaults to the command's name. */
  name?: string;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly child: ChildProcess;
  readonly name: string;
  /** Also the process group id: the child is its group's leader. */
  readonly pid: number;
  readonly exited: Promise<ExitStatus>;
  /** Undefined while running. */
  exitStatus(): ExitStatus | undefined;
  /** The last 64 KiB of stdout and stderr, interleaved, for error messages. */
  recentOutput(): string;
  /** Complete stdout lines seen so far. */
  stdoutLines(): readonly string[];
  /** SIGTERM to the whole group, SIGKILL to the group after `graceMs` or once the leader is gone. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_LIMIT = 64 * 1024;
const running = new Set<ManagedProcess>();

// Last line of defence when a test run dies without its after() hooks: no orphans left behind.
process.on("exit", () => {
  for (const proc of running) killGroup(proc.pid, "SIGKILL");
});

/** Sends `signal` to every process in the group led by `pid`; a group already gone is fine. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

export function spawnProcess(command: string, args: readonly string[], options: SpawnOptions = {}): ManagedProcess {
  const name = options.name ?? command.split("/").pop() ?? command;
  // detached: the child calls setsid() and leads a new process group, so kill(-pid) reaches
  // its whole tree and a Ctrl-C in the terminal does not race our own shutdown.
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) {
    // spawn reports ENOENT and friends asynchronously; make the failure synchronous and clear
    // (and swallow the 'error' event, which would otherwise crash the process unhandled).
    child.once("error", () => undefined);
    throw new Error(`could not start ${command}: no pid (is it installed and executable?)`);
  }
  const pid = child.pid;

  let output = "";
  const lines: string[] = [];
  let partialLine = "";
  const append = (text: string) => {
    output = (output + text).slice(-OUTPUT_LIMIT);
  };
  const echoLines = (text: string, stream: NodeJS.WriteStream) => {
    if (!options.echo) return;
    for (const line of text.split("\n")) if (line) stream.write(`[${name}] ${line}\n`);
  };
  child.stdout!.setEncoding("utf8").on("data", (text: string) => {
    append(text);
    echoLines(text, process.stdout);
    const parts = (partialLine + text).split("\n");
    partialLine = parts.pop() ?? "";
    lines.push(...parts);
  });
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    append(text);
    echoLines(text, process.stderr);
  });

  let status: ExitStatus | undefined;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.on("error", (err) => {
      append(`\n[spawn error] ${err.message}\n`);
      status ??= { code: null, signal: null };
      resolve(status);
    });
    child.on("exit", (code, signal) => {
      status = { code, signal };
      resolve(status);
    });
  });

  const managed: ManagedProcess = {
    child,
    name,
    pid,
    exited,
    exitStatus: () => status,
    recentOutput: () => output,
    stdoutLines: () => lines,
    async stop(graceMs = 5000) {
      if (!running.has(managed)) return;
      killGroup(pid, "SIGTERM");
      await withTimeout(exited, graceMs, `${name} to exit after SIGTERM`).catch(() => undefined);
      // Whatever is left in the group (children that ignore SIGTERM or are slow) goes now.
      killGroup(pid, "SIGKILL");
      await exited;
      running.delete(managed);
    },
  };
  // Tracked until stop(), even after the leader exits: its group may still hold children.
  running.add(managed);
  return managed;
}

/** Stops every process started by spawnProcess that is still tracked (for after() hooks). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((proc) => proc.stop()));
}

function describeExit(proc: ManagedProcess): string | undefined {
  const status = proc.exitStatus();
  if (status === undefined) return undefined;
  const how = status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
  return `${proc.name} exited (${how}); output:\n${proc.recentOutput()}`;
}

/**
 * Waits for the first stdout line that is a JSON object (and satisfies `accept`), e.g. the
 * `{"url":...}` line a server prints once it listens. Fails early if the process exits.
 */
export async function waitForJsonLine<T = Record<string, unknown>>(
  proc: ManagedProcess,
  { timeoutMs = 30_000, accept = () => true }: { timeoutMs?: number; accept?: (value: T) => boolean } = {},
): Promise<T> {
  let scanned = 0;
  const findLine = (): T | undefined => {
    const lines = proc.stdoutLines();
    for (; scanned < lines.length; scanned++) {
      const line = lines[scanned]!.trim();
      if (!line.startsWith("{")) continue;
      try {
        const value = JSON.parse(line) as T;
        if (accept(value)) return value;
      } catch {
        // Not JSON after all (a log line starting with "{"): keep scanning.
      }
    }
    return undefined;
  };
  return pollUntil(findLine, {
    timeoutMs,
    intervalMs: 20,
    description: `a JSON line on ${proc.name}'s stdout`,
    // A line printed just before exit still counts: only abort when nothing matched.
    abortIf: () => (proc.exitStatus() && findLine() === undefined ? describeExit(proc) : undefined),
  });
}

/**
 * Waits until `url` answers with a status `accept` likes (default: any 2xx). Pass the process
 * that should serve it to fail at once, with its output, if it dies instead.
 */
export async function waitForUrl(
  url: string,
  {
    timeoutMs = 30_000,
    process: proc,
    accept = (status: number) => status >= 200 && status < 300,
  }: { timeoutMs?: number; process?: ManagedProcess; accept?: (status: number) => boolean } = {},
): Promise<void> {
  await pollUntil(
    async () => {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer(); // drain, so the connection is released
      return accept(response.status) || undefined;
    },
    {
      timeoutMs,
      intervalMs: 50,
      description: `${url} to answer`,
      abortIf: () => (proc ? describeExit(proc) : undefined),
    },
  );
}

/** Waits for the process to exit on its own and returns its status. */
export async function waitForExit(proc: ManagedProcess, timeoutMs: number): Promise<ExitStatus> {
  return withTimeout(proc.exited, timeoutMs, `${proc.name} to exit`);
}

/**
 * Pids of the live processes below `rootPid` (children, grandchildren, ...) whose command line
 * contains `needle`, read from `ps`. Tests use it to find the process a cloud started for them,
 * where a machine-wide `pgrep` would also find other test runs' processes.
 */
export function descendantPids(rootPid: number, needle: string): number[] {
  const listing = spawnSync("ps", ["-e", "-o", "pid=,ppid=,args="], { encoding: "utf8" }).stdout;
  const rows = listing
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const below = new Set([rootPid]);
  // Parents may be listed after their children: repeat until no new descendant turns up.
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (below.has(row.ppid) && !below.has(row.pid)) {
        below.add(row.pid);
        grew = true;
      }
    }
  }
  return rows.filter((row) => row.pid !== rootPid && below.has(row.pid) && row.args.includes(needle)).map((row) => row.pid);
}
