/**
 * Which rows of a fixed-row-height list are on screen. The Jobs table renders only this window so
 * 10,000 jobs cost as much as 30.
 */
export interface RowWindow {
  /** First rendered row index. */
  start: number;
  /** One past the last rendered row index. */
  end: number;
  /** Height of the spacer above the rendered rows, in px. */
  padTop: number;
  /** Height of the spacer below the rendered rows, in px. */
  padBottom: number;
}

export function visibleWindow(scrollTop: number, viewportHeight: number, rowHeight: number, total: number, overscan = 8): RowWindow {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const start = Math.max(0, Math.min(total, first - overscan));
  const end = Math.min(total, first + Math.ceil(viewportHeight / rowHeight) + overscan);
  return { start, end, padTop: start * rowHeight, padBottom: (total - end) * rowHeight };
}
