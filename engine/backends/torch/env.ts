/**
 * The environment of every Python process that trains with torch (the backend's server and the
 * bench's plain-loop anchor alike, so they are compared on equal terms).
 *
 * Two thread pools share the cores: torch's OpenMP pool (torch.set_num_threads) runs the
 * element-wise work, and Debian's torch calls the system BLAS, whose pthread OpenBLAS runs every
 * matrix product on a pool of its own. By default both pools' idle threads spin-wait (GNU OpenMP
 * for ~300k spins after every parallel region, OpenBLAS for ~2^28 cycles after every product),
 * so each pool's spinning threads held the cores the other needed. The earlier remedy, OpenBLAS
 * on one thread, left every product on one core. Now idle threads sleep almost at once
 * (GOMP_SPINCOUNT=1000, OPENBLAS_THREAD_TIMEOUT=4, the smallest timeout) and both pools use every
 * core. Measured on 2 cores, medians of 7 interleaved runs: d=256 × 4 LoRA 5,042 -> 7,712
 * tokens/s, svc-tiny's quickstart 26,439 -> 30,909, a SmolLM2-shaped 8-block model 420 -> 680;
 * and spinning pools collapsed under other load (quickstart 570-2,400 tokens/s in the loaded
 * runs, 15,000-20,000 with short spins). OMP_WAIT_POLICY=PASSIVE (no spinning at all) cost svc-tiny
 * 23% (its small operations pay each wake-up). A value the user set is kept.
 */
export function torchProcessEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const threads = extra.SVC_TORCH_THREADS ?? process.env.SVC_TORCH_THREADS;
  const defaults: Record<string, string | undefined> = {
    // OpenBLAS on as many threads as torch's pool (its own default is every core, as torch's is).
    OPENBLAS_NUM_THREADS: threads,
    GOMP_SPINCOUNT: '1000',
    OPENBLAS_THREAD_TIMEOUT: '4',
    // No .pyc files: the package may be installed read-only, and they would dirty a checkout.
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
  };
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [name, value] of Object.entries(defaults)) if (value !== undefined && env[name] === undefined) env[name] = value;
  for (const [name, value] of Object.entries(extra)) if (value !== undefined) env[name] = value;
  return env;
}
