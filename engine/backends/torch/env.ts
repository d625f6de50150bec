/**
 * The environment of every Python process that trains with torch (the backend's server and the
 * bench's plain-loop anchor alike, so they are compared on equal terms).
 *
 * OPENBLAS_NUM_THREADS=1: torch parallelises each operation over its own OpenMP pool
 * (torch.set_num_threads); Debian's torch calls the system BLAS, and Debian's OpenBLAS (the
 * pthread build) starts a second pool of as many threads inside every matrix product. The two
 * pools oversubscribe the cores and wait on each other: measured on 2 cores, a d=256 × 4 LoRA
 * step took 0.92 s with both pools and 0.415 s with OpenBLAS on one thread, and svc-tiny steps
 * went from 0.044-0.13 s (erratic) to 0.026-0.031 s. A value the user set is kept.
 */
export function torchProcessEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    OPENBLAS_NUM_THREADS: process.env.OPENBLAS_NUM_THREADS ?? '1',
    // No .pyc files: the package may be installed read-only, and they would dirty a checkout.
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    ...Object.fromEntries(Object.entries(extra).filter(([, value]) => value !== undefined)),
  };
}
