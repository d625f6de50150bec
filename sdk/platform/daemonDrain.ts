/**
 * Stopping the detached cloud daemon gracefully on every OS. `svc cloud stop` has no IPC channel to the daemon and a
 * signal on Windows is TerminateProcess (no cleanup: `daemon.json` and the lock stay behind, workers train on), so it
 * asks over HTTP: `POST /drainz` on the control plane with the drain token the daemon wrote to its data dir (0600),
 * which only someone who can read that dir, the daemon's owner, has.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";

export const DRAIN_ROUTE = "/drainz";
export const DRAIN_TOKEN_HEADER = "x-svc-drain-token";
export const drainTokenFile = (dataDir: string): string => path.join(dataDir, "drain-token");

/** Asks the daemon at `cloudUrl` to shut down; false when it could not be asked (no token, refused, unreachable). */
export async function requestDaemonDrain(cloudUrl: string, dataDir: string, timeoutMs = 5000): Promise<boolean> {
  const token = (await readFile(drainTokenFile(dataDir), "utf8").catch(() => "")).trim();
  if (!token) return false;
  try {
    const res = await fetch(`${cloudUrl}${DRAIN_ROUTE}`, { method: "POST", headers: { [DRAIN_TOKEN_HEADER]: token }, signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 202;
  } catch {
    return false;
  }
}
