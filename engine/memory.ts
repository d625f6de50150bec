/**
 * Memory this process may still use, meaning the same on every OS. `os.freemem()` does on Linux (MemAvailable) and
 * Windows (available physical memory, standby pages included), but on macOS it counts only the truly free pages: the
 * inactive and purgeable pages the kernel hands out on demand are left out, and on a Mac that has run for a while
 * they are most of its memory, so checks based on it refuse runs and size pools for a machine that is "full".
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

export interface MemoryProbe {
  platform: NodeJS.Platform;
  freemem: () => number;
  /** `vm_stat`'s output on macOS. */
  vmStat: () => string;
}

const hostProbe: MemoryProbe = {
  platform: process.platform,
  freemem: () => os.freemem(),
  vmStat: () => execFileSync('/usr/bin/vm_stat', { encoding: 'utf8', timeout: 2000, windowsHide: true }),
};

/** Bytes of memory available to a new allocation without swapping. */
export function availableMemory(probe: MemoryProbe = hostProbe): number {
  if (probe.platform !== 'darwin') return probe.freemem();
  try {
    const fromVmStat = darwinAvailable(probe.vmStat());
    if (fromVmStat !== undefined) return Math.max(fromVmStat, probe.freemem());
  } catch {
    // No vm_stat (a sandbox): freemem is an underestimate, still better than nothing.
  }
  return probe.freemem();
}

/** Free + inactive + speculative + purgeable pages from `vm_stat`'s output, in bytes. */
export function darwinAvailable(vmStat: string): number | undefined {
  const pageSize = Number(/page size of (\d+) bytes/.exec(vmStat)?.[1]);
  if (!pageSize) return undefined;
  const pages = (label: string) => Number(new RegExp(`^Pages ${label}:\\s+(\\d+)`, 'm').exec(vmStat)?.[1] ?? 0);
  const free = pages('free');
  if (!free && !/^Pages free:/m.test(vmStat)) return undefined;
  return (free + pages('inactive') + pages('speculative') + pages('purgeable')) * pageSize;
}
