/**
 * Learning-rate schedule: linear warm-up, then cosine or linear decay to `minRatio` of the peak.
 * Warm-up keeps the first Adam steps (whose second-moment estimate is still noisy) small.
 */
export type ScheduleKind = 'cosine' | 'linear' | 'constant';

export interface ScheduleOptions {
  peak: number;
  totalSteps: number;
  warmupSteps: number;
  kind: ScheduleKind;
  /** Final learning rate as a fraction of the peak. Default 0.1. */
  minRatio?: number;
}

/** Learning rate for `step` (1-based: the first optimiser update is step 1). */
export function learningRateAt(step: number, options: ScheduleOptions): number {
  const { peak, totalSteps, warmupSteps, kind } = options;
  const minRatio = options.minRatio ?? 0.1;
  if (warmupSteps > 0 && step <= warmupSteps) return (peak * step) / warmupSteps;
  if (kind === 'constant') return peak;
  const decaySteps = Math.max(1, totalSteps - warmupSteps);
  const progress = Math.min(1, Math.max(0, (step - warmupSteps) / decaySteps));
  const shape = kind === 'cosine' ? 0.5 * (1 + Math.cos(Math.PI * progress)) : 1 - progress;
  return peak * (minRatio + (1 - minRatio) * shape);
}
