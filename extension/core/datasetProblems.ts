/**
 * The project's datasets as VS Code's Problems panel shows them, without VS Code: each file named
 * by the trainer's manifest is checked by the SDK's own dataset check (the one `svc start` and the
 * cloud run, so the editor and the run agree line for line), and every issue becomes a problem on
 * its line. The DiagnosticCollection adapter (extension/datasetDiagnostics.ts) only translates.
 */
import { chatJsonlIssues } from "../../sdk/jsonl.js";
import type { Manifest } from "../../sdk/manifest.js";

export interface DatasetProblem {
  /** 0-based line, as editors count. */
  line: number;
  /** End of the marked range: the line's length (the whole line is underlined). */
  endColumn: number;
  message: string;
}

/** Shown on the problems and in the panel's source column. */
export const PROBLEM_SOURCE = "svc";

/** More than this many problems in one file are summed up on the last one: the Problems panel stays usable. */
export const MAX_PROBLEMS_PER_FILE = 200;

/** The dataset files (relative paths) a manifest names; none until the manifest is known and ok. */
export function datasetFiles(manifest: Manifest | undefined): string[] {
  return manifest?.status === "ok" ? [...new Set(manifest.trainer.datasets ?? [])] : [];
}

/** The byte-token limit to check conversations against, where the model counts in bytes (svc-tiny). */
export function lengthLimit(manifest: Manifest | undefined): number | undefined {
  return manifest?.status === "ok" ? manifest.trainer.byteTokenLimit : undefined;
}

/** Problems of one dataset's text; `contextLength` adds the length check of svc-tiny's bytes. */
export function datasetProblems(text: string, contextLength?: number): DatasetProblem[] {
  const lines = text.split(/\r?\n/);
  const issues = chatJsonlIssues(text, contextLength !== undefined ? { contextLength } : {});
  const problems = issues.slice(0, MAX_PROBLEMS_PER_FILE).map((issue) => {
    // Line 0 is the whole file (e.g. empty): marked on its first line.
    const line = Math.max(0, issue.line - 1);
    return { line, endColumn: Math.max(1, (lines[line] ?? "").replace(/^\uFEFF/, "").length), message: issue.message };
  });
  if (issues.length > MAX_PROBLEMS_PER_FILE) {
    const last = problems[problems.length - 1];
    last.message += ` (and ${issues.length - MAX_PROBLEMS_PER_FILE} more invalid lines after this one)`;
  }
  return problems;
}
