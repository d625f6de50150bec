/**
 * Stopping a child of ours gracefully on every OS. A signal is no way to ask on Windows: there `kill("SIGTERM")`
 * is TerminateProcess, so the child never runs its cleanup (a job trains on unwatched, `daemon.json` and locks stay
 * behind). So the parent asks over the child's IPC channel first (`{ svc: "drain" }`), and only on POSIX falls back to
 * SIGTERM for a child without one; a child still running after the grace period is killed.
 *
 * The child side, `onStopRequest`, answers the same request, Ctrl-C (SIGINT) and SIGTERM with one handler.
 */
import type { ChildProcess } from "node:child_process";

export const DRAIN_MESSAGE = { svc: "drain" } as const;

export const isDrainMessage = (message: unknown): boolean =>
  typeof message === "object" && message !== null && (message as { svc?: unknown }).svc === DRAIN_MESSAGE.svc;

/** The parts of a ChildProcess that stopping uses (a real one in the product). */
export type StoppableChild = Pick<ChildProcess, "connected" | "exitCode" | "signalCode" | "send" | "kill" | "once">;

export interface StopOptions {
  /** How long the child may take to finish after being asked, before it is killed. */
  graceMs: number;
  platform?: NodeJS.Platform;
}

/** How a child ended: it finished when asked, or it was killed (asked and too slow, or no way to ask). */
export type StopOutcome = "drained" | "killed";

export async function stopChild(child: StoppableChild, { graceMs, platform = process.platform }: StopOptions): Promise<StopOutcome> {
  if (child.exitCode !== null || child.signalCode !== null) return "drained";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (!askToDrain(child, platform)) {
    child.kill("SIGKILL");
    await exited;
    return "killed";
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), graceMs)));
  const outcome = await Promise.race([exited, late]).finally(() => clearTimeout(timer));
  if (outcome !== "late") return "drained";
  child.kill("SIGKILL");
  await exited;
  return "killed";
}

/** Sends the drain request; false when this child cannot be asked (no IPC channel on Windows). */
function askToDrain(child: StoppableChild, platform: NodeJS.Platform): boolean {
  if (child.connected) {
    try {
      child.send(DRAIN_MESSAGE);
      return true;
    } catch {
      // The channel closed meanwhile: fall through to the signal, where there is one.
    }
  }
  if (platform === "win32") return false;
  return child.kill("SIGTERM");
}

/** What `onStopRequest` listens on: the running process in the product. */
export type StopRequestSource = Pick<NodeJS.Process, "on" | "off">;

/** How a stop was asked for: the parent's drain message, Ctrl-C, or SIGTERM. */
export type StopRequest = "drain" | "SIGINT" | "SIGTERM";

/**
 * Calls `handler` on each stop request. Returns the function that stops listening; until then the IPC channel (when
 * there is one) keeps the process alive, so call it when done.
 */
export function onStopRequest(handler: (how: StopRequest) => void, source: StopRequestSource = process): () => void {
  const onMessage = (message: unknown) => {
    if (isDrainMessage(message)) handler("drain");
  };
  const onInterrupt = () => handler("SIGINT");
  const onTerminate = () => handler("SIGTERM");
  source.on("message", onMessage);
  source.on("SIGINT", onInterrupt);
  source.on("SIGTERM", onTerminate);
  return () => {
    source.off("message", onMessage);
    source.off("SIGINT", onInterrupt);
    source.off("SIGTERM", onTerminate);
  };
}
