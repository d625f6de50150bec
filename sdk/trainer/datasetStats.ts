/**
 * One dataset file read the way a dry run reads it: validated by the SDK's dataset check (the one
 * `svc start` and the cloud run, so the errors are the same lines), and every well-formed
 * conversation rendered with the model's own tokenizer to count its tokens.
 */
import { validateChatJsonl as parseExamples } from "../../engine/data/chat-jsonl.js";
import type { ChatTokenizer, RenderedChat } from "../../engine/data/chat-tokenizer.js";
import { checkChatJsonl } from "../jsonl.js";
import { PREVIEW_CONTENT_CHARS, PREVIEW_MAX_ISSUES, PREVIEW_ROWS, type DryRunSplit, type PreviewRow } from "./dryRunReport.js";

export interface SplitInput {
  split: DryRunSplit["split"];
  file: string;
  text: string;
  /** The model's tokenizer; without one only the structure is checked and no tokens are counted. */
  tokenizer?: ChatTokenizer;
  /** Longest conversation the run accepts, in tokens. */
  maxSeqLength?: number;
  /** Add the preview (`svc start --dry-run --preview`): every length, the first rows, every issue. */
  preview?: boolean;
}

export interface InspectedSplit {
  report: DryRunSplit;
  /** The conversations that would train, rendered, in file order (for the step plan and the timing). */
  rendered: RenderedChat[];
}

export function inspectSplit({ split, file, text, tokenizer, maxSeqLength, preview = false }: SplitInput): InspectedSplit {
  const checked = checkChatJsonl(text, tokenizer ? { tokenizer, maxSeqLength } : {});
  const base = { split, file, conversations: checked.report.exampleCount, errors: checked.report.errors };
  const examples = parseExamples(text).examples;
  const previewOf = (lengths: number[] | null, tokensAt: (index: number) => number | null) =>
    preview
      ? {
          preview: {
            lengths,
            rows: examples.slice(0, PREVIEW_ROWS).map((example, i) => previewRow(example.line, example.messages, tokensAt(i))),
            issues: checked.issues.slice(0, PREVIEW_MAX_ISSUES),
            issueCount: checked.issues.length,
          },
        }
      : {};
  if (!tokenizer) return { report: { ...base, tokens: null, trainedTokens: null, longest: null, ...previewOf(null, () => null) }, rendered: [] };
  let tokens = 0;
  let trainedTokens = 0;
  let longest: DryRunSplit["longest"] = null;
  const kept: RenderedChat[] = [];
  /** Each example's length by its index in `examples` (null: the template refused it), and the lengths in file order. */
  const byExample: (number | null)[] = [];
  const lengths: number[] = [];
  for (const example of examples) {
    let rendered;
    try {
      rendered = tokenizer.renderChat(example.messages);
    } catch {
      byExample.push(null);
      continue; // the template refused it: already one of the errors above
    }
    const length = rendered.ids.length;
    byExample.push(length);
    lengths.push(length);
    if (!longest || length > longest.tokens) longest = { line: example.line, tokens: length };
    if (maxSeqLength !== undefined && length > maxSeqLength) continue;
    kept.push(rendered);
    tokens += length;
    // The first token is never a target (inputs are ids[0..n-2]), as in the trainer's batches.
    trainedTokens += rendered.lossMask.slice(1).reduce((sum, m) => sum + m, 0);
  }
  return { report: { ...base, tokens, trainedTokens, longest, ...previewOf(lengths, (i) => byExample[i] ?? null) }, rendered: kept };
}

/** One conversation as a preview shows it: its line, its messages (long contents cut), its length. */
function previewRow(line: number, messages: readonly { role: string; content: string }[], tokens: number | null): PreviewRow {
  let truncated = false;
  const shown = messages.map(({ role, content }) => {
    if (content.length <= PREVIEW_CONTENT_CHARS) return { role, content };
    truncated = true;
    return { role, content: content.slice(0, PREVIEW_CONTENT_CHARS) };
  });
  return { line, messages: shown, tokens, truncated };
}
