/**
 * At most one call per `intervalMs`: the first call runs at once, the calls that follow within the
 * interval fold into one trailing call. For UI updates fed by a training stream (hundreds of events
 * a second on torch): each update is a message to the workbench, and flooding it starves the
 * webviews being opened beside it.
 */
export function throttle(fn: () => void, intervalMs: number): { (): void; cancel(): void } {
  let last = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const run = () => {
    timer = undefined;
    last = Date.now();
    fn();
  };
  const call = () => {
    if (timer) return;
    const wait = last + intervalMs - Date.now();
    if (wait <= 0) run();
    else timer = setTimeout(run, wait);
  };
  call.cancel = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  return call;
}
