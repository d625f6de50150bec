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
  const { examples, issues } = validateExamples(text, options);
  const errors = issues.slice(0, MAX_REPORTED_ERRORS).map((i) => (i.line === 0 ? i.message : `line ${i.line}: ${i.message}`));
  if (issues.length > MAX_REPORTED_ERRORS) errors.push(`... and ${issues.length - MAX_REPORTED_ERRORS} more invalid lines`);
  return { exampleCount: examples.length, errors };
}
