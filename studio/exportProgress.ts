/**
 * How far each export of the UI's has got (`GET /api/exports/:id`), read from `svc export`'s own
 * progress lines on stderr: a line at the margin starts a step ("downloading the base model ..."),
 * an indented one reports its percent ("  merged: 40% of 120 tensors"). Kept in memory a minute
 * after the export ends, so a last poll still sees it done; at most a few hundred at once.
 */
import type { ExportProgress } from "../sdk/api/studio.js";

const KEEP_AFTER_END_MS = 60_000;
const MOST = 256;

export class ExportProgressBoard {
  private readonly exports = new Map<string, ExportProgress & { partial: string }>();

  start(id: string, stage: string): void {
    if (this.exports.size >= MOST) this.exports.delete(this.exports.keys().next().value as string);
    this.exports.set(id, { stage, done: false, partial: "" });
  }

  /** A piece of the CLI's stderr: whole lines move the progress. */
  output(id: string, text: string): void {
    const entry = this.exports.get(id);
    if (!entry) return;
    const lines = (entry.partial + text).split("\n");
    entry.partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      const percent = /(\d{1,3})%/.exec(line);
      if (/^\s/.test(line)) {
        if (percent) entry.percent = Math.min(100, Number(percent[1]));
      } else {
        entry.stage = line.trim();
        delete entry.percent;
      }
    }
  }

  stage(id: string, stage: string): void {
    const entry = this.exports.get(id);
    if (!entry) return;
    entry.stage = stage;
    delete entry.percent;
  }

  end(id: string): void {
    const entry = this.exports.get(id);
    if (!entry) return;
    entry.done = true;
    setTimeout(() => {
      if (this.exports.get(id) === entry) this.exports.delete(id);
    }, KEEP_AFTER_END_MS).unref();
  }

  get(id: string): ExportProgress | undefined {
    const entry = this.exports.get(id);
    if (!entry) return undefined;
    return { stage: entry.stage, done: entry.done, ...(entry.percent === undefined ? {} : { percent: entry.percent }) };
  }
}
