/**
 * The keyboard alternative to hovering and dragging on a job chart (it is focusable, role
 * "slider"): arrows move the cursor step by step, Home/End jump to the ends of the window, + and -
 * zoom around the cursor, Shift+arrows pan a zoomed window, 0 shows every step again, Escape hides
 * the cursor. Pure: the plot applies the result.
 */
import { lowerBound, upperBound, type Extent } from "./chart.js";
import { panWindow, zoomAround } from "./chartZoom.js";

/** One line for the plot's accessible name and the visible hint. */
export const CHART_KEYS_HINT = "Arrow keys read values; + and − zoom, Shift+arrows pan, 0 resets.";

export interface ChartKeyState {
  /** Ascending steps the cursor can stop at. */
  steps: readonly number[];
  /** The cursor's step, if shown. */
  cursor: number | undefined;
  /** Every step's extent, and the window shown (the zoom, or the same extent). */
  full: Extent;
  shown: Extent;
  zoomed: boolean;
}

export interface ChartKeyResult {
  cursor: number | undefined;
  /** The new zoom (undefined: all steps); absent when the key leaves the zoom alone. */
  zoom?: { window: Extent | undefined };
}

/** What a key does, or undefined for a key the chart leaves to the page. */
export function chartKey(key: string, shiftKey: boolean, state: ChartKeyState): ChartKeyResult | undefined {
  const { steps, cursor, full, shown } = state;
  // The cursor stops only at steps inside the window.
  const first = lowerBound(steps, shown.min);
  const end = upperBound(steps, shown.max);
  const at = cursor === undefined ? -1 : lowerBound(steps, cursor);
  const centre = cursor ?? (shown.min + shown.max) / 2;
  switch (key) {
    case "ArrowRight":
    case "ArrowLeft": {
      const forward = key === "ArrowRight";
      if (shiftKey) return state.zoomed ? { cursor, zoom: { window: panWindow(shown, full, forward ? 0.25 : -0.25) } } : { cursor };
      if (end <= first) return { cursor };
      let index = at < first || at >= end ? (forward ? first : end - 1) : at + (forward ? 1 : -1);
      index = Math.max(first, Math.min(end - 1, index));
      return { cursor: steps[index] };
    }
    case "Home":
      return { cursor: end > first ? steps[first] : cursor };
    case "End":
      return { cursor: end > first ? steps[end - 1] : cursor };
    case "+":
    case "=":
      return { cursor, zoom: { window: zoomAround(shown, full, centre, 0.5) ?? (state.zoomed ? shown : undefined) } };
    case "-":
    case "_":
      return { cursor, zoom: { window: zoomAround(shown, full, centre, 2) } };
    case "0":
      return { cursor, zoom: { window: undefined } };
    case "Escape":
      return { cursor: undefined };
    default:
      return undefined;
  }
}
