/**
 * Zooming the job charts on the step axis: a drag selects a step range, the keyboard zooms around
 * the cursor step and pans, and a reset (double-click, `0`, the Reset button) shows every step
 * again. A zoom is a step window inside the full extent; `undefined` means "everything".
 */
import { stepForX, type Extent, type PlotArea } from "./chart.js";

/** A drag narrower than this many pixels is a click, not a selection. */
export const MIN_DRAG_PX = 5;
/** The narrowest window, in steps: two neighbouring steps stay apart. */
export const MIN_SPAN_STEPS = 2;

/** The window shown: the zoom when there is one, else the full extent. */
export function visibleSteps(full: Extent, zoom: Extent | undefined): Extent {
  return zoom ?? full;
}

/**
 * The window a drag from `x0` to `x1` (SVG x coordinates, either direction) selects on a plot
 * showing `shown`; undefined for a click or a drag that selects nothing new.
 */
export function zoomFromDrag(x0: number, x1: number, shown: Extent, area: PlotArea, full: Extent): Extent | undefined {
  const left = Math.max(area.left, Math.min(x0, x1));
  const right = Math.min(area.left + area.width, Math.max(x0, x1));
  if (right - left < MIN_DRAG_PX) return undefined;
  return fitWindow({ min: stepForX(left, shown, area), max: stepForX(right, shown, area) }, full);
}

/**
 * Zooms by `factor` (0.5 halves the span, 2 doubles it) keeping `center` where it is on screen.
 * Returns undefined once the window would cover the full extent (zoomed all the way out).
 */
export function zoomAround(shown: Extent, full: Extent, center: number, factor: number): Extent | undefined {
  const span = (shown.max - shown.min) * factor;
  if (span >= full.max - full.min) return undefined;
  const c = Math.min(shown.max, Math.max(shown.min, center));
  const min = c - (c - shown.min) * factor;
  return fitWindow({ min, max: min + span }, full);
}

/** Moves the window by `fraction` of its span (negative: towards step 0), stopping at the ends. */
export function panWindow(shown: Extent, full: Extent, fraction: number): Extent | undefined {
  if (shown.min <= full.min && shown.max >= full.max) return undefined;
  const delta = (shown.max - shown.min) * fraction;
  return fitWindow({ min: shown.min + delta, max: shown.max + delta }, full);
}

/**
 * Keeps a window inside the full extent and at least MIN_SPAN_STEPS wide (widened around its
 * centre); undefined when it covers everything anyway.
 */
export function fitWindow(window: Extent, full: Extent): Extent | undefined {
  const fullSpan = full.max - full.min;
  let span = Math.max(window.max - window.min, Math.min(MIN_SPAN_STEPS, fullSpan));
  if (span >= fullSpan) return undefined;
  let min = (window.min + window.max) / 2 - span / 2;
  if (window.max - window.min >= span) min = window.min; // not widened: keep the edges exactly
  min = Math.max(full.min, Math.min(min, full.max - span));
  span = Math.min(span, full.max - min);
  return { min, max: min + span };
}

/** "Steps 120–480" for the zoom badge and the plot's accessible description. */
export function describeWindow(window: Extent): string {
  return `Steps ${Math.round(window.min)}–${Math.round(window.max)}`;
}
