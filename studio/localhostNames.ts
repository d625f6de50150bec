/**
 * Whether `<name>.localhost` resolves for Node on the studio's machine. Browsers map every
 * `*.localhost` name to loopback themselves, but Node and Python ask the system resolver, which on
 * many machines (glibc without nss-myhostname, for one) answers ENOTFOUND. The Quick start samples
 * default to the deployment's `/d/<slug>` local URL when it does not resolve, so the
 * Python and JavaScript samples work as shown. Checked once per studio process: it is a property of
 * the machine, and the answer does not change while the studio runs.
 */
import { lookup } from "node:dns/promises";

/** A name nobody registers; only the `*.localhost` rule can make it resolve. */
const PROBE_NAME = "svc-probe.localhost";
const PROBE_TIMEOUT_MS = 2000;

let cached: Promise<boolean> | undefined;

export function localhostSubdomainsResolve(): Promise<boolean> {
  cached ??= probe();
  return cached;
}

async function probe(): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  // A resolver that hangs counts as one that does not resolve: the sample must work now.
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS)));
  const answer = lookup(PROBE_NAME).then(
    ({ address }) => address === "127.0.0.1" || address === "::1",
    () => false,
  );
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
}
