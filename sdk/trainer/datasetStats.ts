/**
 * One dataset file read the way a dry run reads it: validated by the SDK's dataset check (the one
 * `svc start` and the cloud run, so the errors are the same lines), and every well-formed
 * conversation rendered with the model's own tokenizer to count its tokens.
 */
import { validateChatJsonl as parseExamples } from "../../engine/data/chat-jsonl.js";
import type { ChatTokenizer, RenderedChat } from "../../engine/data/chat-tokenizer.js";
import { validateChatJsonl } from "../jsonl.js";
import type { DryRunSplit } from "./dryRunReport.js";

export interface SplitInput {
  split: DryRunSplit["split"];
  file: string;
  text: string;
  /** The model's tokenizer; without one only the structure is checked and no tokens are counted. */
  tokenizer?: ChatTokenizer;
  /** Longest conversation the run accepts, in tokens. */
  maxSeqLength?: number;
}

export interface InspectedSplit {
  report: DryRunSplit;
  /** The conversations that would train, rendered, in file order (for the step plan and the timing). */
  rendered: RenderedChat[];
}

export function inspectSplit({ split, file, text, tokenizer, maxSeqLength }: SplitInput): InspectedSplit {
  const checked = validateChatJsonl(text, tokenizer ? { tokenizer, maxSeqLength } : {});
  const base = { split, file, conversations: checked.exampleCount, errors: checked.errors };
  if (!tokenizer) return { report: { ...base, tokens: null, trainedTokens: null, longest: null }, rendered: [] };
  let tokens = 0;
  let trainedTokens = 0;
  let longest: DryRunSplit["longest"] = null;
  const kept: RenderedChat[] = [];
  for (const example of parseExamples(text).examples) {
    let rendered;
    try {
      rendered = tokenizer.renderChat(example.messages);
    } catch {
      continue; // the template refused it: already one of the errors above
    }
    const length = rendered.ids.length;
    if (!longest || length > longest.tokens) longest = { line: example.line, tokens: length };
    if (maxSeqLength !== undefined && length > maxSeqLength) continue;
    kept.push(rendered);
    tokens += length;
    // The first token is never a target (inputs are ids[0..n-2]), as in the trainer's batches.
    trainedTokens += rendered.lossMask.slice(1).reduce((sum, m) => sum + m, 0);
  }
  return { report: { ...base, tokens, trainedTokens, longest }, rendered: kept };
}
