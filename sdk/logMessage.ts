/**
 * The one-line log message of a job event, in the spec's exact forms (SPEC.md section 6):
 * `step=10 loss=2.3100`, `step=20 evalLoss=2.2000`, `step=30` (checkpoint), `1 artifact`,
 * the error of a failure, the raw JSON payload of training.started, and the sentence of a
 * training.progress event (e.g. "loading the base model: 40% (0.96 GB of 2.4 GB)").
 * Used by `svc start` and the UI alike, so the terminal and the studio read the same; the terminal's lines add the token
 * accuracies after the losses (`step=10 loss=2.3100 tokenAccuracy=0.6100`).
 */

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const fixed = (v: number) => v.toFixed(4);

export interface LogMessageOptions {
  /** The terminal's lines (`svc start`) add the token accuracies after the losses; the UI's event log keeps SPEC's form. */
  accuracies?: boolean;
}

export function logMessage(type: string, data: Record<string, unknown>, options: LogMessageOptions = {}): string {
  switch (type) {
    case "training.started":
      return JSON.stringify(data);
    case "training.log": {
      let text = `step=${data.step}`;
      if (isNumber(data.loss)) text += ` loss=${fixed(data.loss)}`;
      if (isNumber(data.evalLoss)) text += ` evalLoss=${fixed(data.evalLoss)}`;
      if (options.accuracies) {
        if (isNumber(data.tokenAccuracy)) text += ` tokenAccuracy=${fixed(data.tokenAccuracy)}`;
        if (isNumber(data.evalTokenAccuracy)) text += ` evalTokenAccuracy=${fixed(data.evalTokenAccuracy)}`;
      }
      return text;
    }
    case "checkpoint.saved":
      return `step=${data.step}`;
    case "samples.graded": {
      const samples = Array.isArray(data.samples) ? data.samples.length : 0;
      const rate = isNumber(data.passRate) ? `, ${Math.round(data.passRate * 100)}% pass` : "";
      return `samples at step ${data.step}: ${samples} answered${rate}`;
    }
    case "training.progress":
      return typeof data.message === "string" ? data.message : JSON.stringify(data);
    case "training.completed": {
      const n = isNumber(data.artifacts) ? data.artifacts : 0;
      return `${n} artifact${n === 1 ? "" : "s"}`;
    }
    case "training.failed":
      return String(data.error ?? "training failed");
    case "training.cancelled":
      return typeof data.reason === "string" ? data.reason : JSON.stringify(data);
    default:
      return JSON.stringify(data);
  }
}
