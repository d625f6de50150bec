/**
 * Validation of chat fine-tuning datasets in the OpenAI JSONL format, for the places that report
 * to people: `svc start` (before any upload) and the cloud's dataset upload (which never trusts a
 * client). The rules themselves live with the engine (engine/data/chat-jsonl.ts), so what is
 * accepted here is exactly what the trainer can train on.
 */
import { validateChatJsonl as validateExamples } from "../engine/data/chat-jsonl.js";
// Type only: a real model's tokenizer (node-llama-cpp) is loaded by the caller, never from here,
// so the cloud's upload check and browser bundles stay free of native code.
import type { ChatTokenizer } from "../engine/data/chat-tokenizer.js";

export type { ChatMessage } from "../engine/tokenizer.js";

export interface JsonlReport {
  /** Number of valid examples (non-blank lines). */
  exampleCount: number;
  /** One readable line per problem, `line N: why`, at most MAX_REPORTED_ERRORS of them. */
  errors: string[];
}

const MAX_REPORTED_ERRORS = 20;

export interface JsonlValidationOptions {
  /** Rejects conversations longer than the model's context (in tokens). */
  contextLength?: number;
  /** A real model's training limit in tokens (wins over contextLength). */
  maxSeqLength?: number;
  /** Counts tokens as this model will; default svc-tiny's byte tokenizer. */
  tokenizer?: ChatTokenizer;
}

export function validateChatJsonl(text: string, options: JsonlValidationOptions = {}): JsonlReport {
  return checkChatJsonl(text, options).report;
}

/** The check once, as both the report's lines and every issue with its line (a preview lists them all). */
export function checkChatJsonl(text: string, options: JsonlValidationOptions = {}): { report: JsonlReport; issues: { line: number; message: string }[] } {
  const { examples, issues } = validateExamples(text, options);
  return { report: toReport(examples.length, issues), issues };
}

/**
 * The same check as line-numbered issues, all of them (line 0: the whole file, e.g. empty), for
 * editors that mark each bad line (VS Code's Problems panel).
 */
export function chatJsonlIssues(text: string, options: JsonlValidationOptions = {}): { line: number; message: string }[] {
  return validateExamples(text, options).issues;
}

/**
 * The same check, a slice of lines at a time with a turn of the event loop between slices: a
 * server validating a 50 MB upload (about 0.75 s of work in one piece) keeps answering its other
 * requests meanwhile, the edge's among them.
 */
export async function validateChatJsonlYielding(text: string, options: JsonlValidationOptions = {}, sliceChars = 256 * 1024): Promise<JsonlReport> {
  const issues: { line: number; message: string }[] = [];
  let exampleCount = 0;
  let linesBefore = 0;
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (start < text.length) {
    // Slices end just after a newline, so each holds whole lines and numbering carries on.
    let end = Math.min(text.length, start + sliceChars);
    if (end < text.length) {
      const newline = text.indexOf("\n", end - 1);
      end = newline === -1 ? text.length : newline + 1;
    }
    const slice = text.slice(start, end);
    const result = validateExamples(slice, options);
    exampleCount += result.examples.length;
    for (const issue of result.issues) if (issue.line !== 0) issues.push({ line: issue.line + linesBefore, message: issue.message });
    for (let i = slice.indexOf("\n"); i !== -1; i = slice.indexOf("\n", i + 1)) linesBefore++;
    start = end;
    await new Promise((resolve) => setImmediate(resolve));
  }
  // No examples and no bad line: the whole-text check's own "empty" verdict.
  if (exampleCount === 0 && issues.length === 0) return validateChatJsonl("", options);
  return toReport(exampleCount, issues);
}

function toReport(exampleCount: number, issues: readonly { line: number; message: string }[]): JsonlReport {
  const errors = issues.slice(0, MAX_REPORTED_ERRORS).map((i) => (i.line === 0 ? i.message : `line ${i.line}: ${i.message}`));
  if (issues.length > MAX_REPORTED_ERRORS) errors.push(`... and ${issues.length - MAX_REPORTED_ERRORS} more invalid lines`);
  return { exampleCount, errors };
}
