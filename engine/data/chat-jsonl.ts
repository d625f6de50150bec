/**
 * Parsing and validation of chat datasets in the OpenAI fine-tuning JSONL format:
 *   {"messages":[{"role":"user","content":"..."},{"role":"assistant","content":"..."}]}
 *
 * Every problem is reported with its 1-based line number before any training starts, so a user
 * fixes the file once instead of discovering errors mid-run. Blank lines are ignored. Unknown
 * keys (e.g. "name", "weight") are ignored. Roles other than system/user/assistant (tool calls)
 * are rejected because the byte-level chat template has no place for them.
 *
 * Conversations longer than the model's context are REJECTED by default (overflow: 'reject'):
 * silently cutting them could drop the very assistant answer the user wants to teach. Callers can
 * opt into 'truncate', which keeps the first contextLength tokens when some assistant tokens survive.
 *
 * Token counts come from a ChatTokenizer (engine/data/chat-tokenizer.ts): svc-tiny's byte
 * tokenizer by default, or a real GGUF's own tokenizer and chat template, so a conversation is
 * measured exactly as it will be trained and served.
 */
import { readFile } from 'node:fs/promises';
import type { ChatMessage, RenderedChat } from '../tokenizer.js';
import { byteChatTokenizer, type ChatTokenizer } from './chat-tokenizer.js';

export interface ChatExample {
  /** 1-based line of the example in its file, for messages that point back to the data. */
  line: number;
  messages: ChatMessage[];
}

export interface DatasetIssue {
  line: number;
  message: string;
}

export type OverflowPolicy = 'reject' | 'truncate';

export interface ParseOptions {
  /** When set, conversations are tokenised and checked against this many tokens. */
  contextLength?: number;
  /** Same as contextLength for a real model's training limit (wins when both are set). */
  maxSeqLength?: number;
  /** Tokenizer to count with; default svc-tiny's byte tokenizer. */
  tokenizer?: ChatTokenizer;
  overflow?: OverflowPolicy;
  /** Shown in error messages, e.g. "train.jsonl". */
  name?: string;
}

const MAX_LISTED_ISSUES = 20;

/** Longest sequence trained on real models by default: long enough for most chats, cheap on memory. */
export const DEFAULT_MAX_SEQ_LENGTH = 1024;

/**
 * The default training sequence limit: svc-tiny trains on its whole context (as before); real
 * models on min(context, DEFAULT_MAX_SEQ_LENGTH), since their contexts (32k+) would not fit in memory.
 */
export function defaultMaxSeqLength(tokenizer: ChatTokenizer, modelContextLength: number): number {
  return tokenizer.templateSource === 'svc' ? modelContextLength : Math.min(modelContextLength, DEFAULT_MAX_SEQ_LENGTH);
}

/** Why a conversation is too long, naming its token count and the limit. */
function tooLongMessage(tokens: number, limit: number, tokenizer: ChatTokenizer): string {
  return tokenizer.templateSource === 'svc'
    ? `conversation is ${tokens} tokens, longer than the model's context of ${limit} tokens (1 token = 1 byte)`
    : `conversation is ${tokens} tokens, longer than maxSeqLength of ${limit} tokens`;
}

export class DatasetValidationError extends Error {
  readonly code = 'invalid_dataset';
  constructor(
    readonly issues: DatasetIssue[],
    name = 'dataset',
  ) {
    super(DatasetValidationError.describe(issues, name));
  }

  private static describe(issues: DatasetIssue[], name: string): string {
    if (issues.length === 1 && issues[0].line === 0) return `${name}: ${issues[0].message}`;
    const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `  line ${i.line}: ${i.message}`);
    const more = issues.length > MAX_LISTED_ISSUES ? [`  ... and ${issues.length - MAX_LISTED_ISSUES} more`] : [];
    return [`${name} has ${issues.length} invalid line${issues.length === 1 ? '' : 's'}:`, ...listed, ...more].join('\n');
  }
}

const ROLES = new Set(['system', 'user', 'assistant']);

/** Checks one parsed line; returns the messages or the reason the line is invalid. */
function checkConversation(value: unknown): ChatMessage[] | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'each line must be a JSON object with a "messages" array';
  const messages = (value as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return 'missing "messages" array';
  if (messages.length === 0) return 'messages must not be empty';
  const out: ChatMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (typeof m !== 'object' || m === null) return `messages[${i}] must be an object`;
    if (typeof m.role !== 'string' || !ROLES.has(m.role)) return `messages[${i}].role must be "system", "user" or "assistant" (got ${JSON.stringify(m.role)})`;
    if (typeof m.content !== 'string') return `messages[${i}].content must be a string`;
    out.push({ role: m.role as ChatMessage['role'], content: m.content });
  }
  if (!out.some((m) => m.role === 'assistant')) return 'messages must contain an assistant message';
  if (out.some((m) => m.role === 'assistant' && m.content.length === 0)) return 'assistant messages must not be empty';
  return out;
}

/** Validates without throwing: the valid examples and every issue found. */
export function validateChatJsonl(text: string, options: ParseOptions = {}): { examples: ChatExample[]; issues: DatasetIssue[] } {
  const examples: ChatExample[] = [];
  const issues: DatasetIssue[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      issues.push({ line, message: 'not valid JSON' });
      return;
    }
    const checked = checkConversation(parsed);
    if (typeof checked === 'string') {
      issues.push({ line, message: checked });
      return;
    }
    const limit = options.maxSeqLength ?? options.contextLength;
    const tokenizer = options.tokenizer ?? byteChatTokenizer;
    if (limit !== undefined || options.tokenizer) {
      // A real template can also refuse a conversation (e.g. raise_exception on role order).
      let length: number;
      try {
        length = tokenizer.renderChat(checked).ids.length;
      } catch (err) {
        issues.push({ line, message: `chat template: ${(err as Error).message}` });
        return;
      }
      if (limit !== undefined && (options.overflow ?? 'reject') === 'reject' && length > limit) {
        issues.push({ line, message: tooLongMessage(length, limit, tokenizer) });
        return;
      }
    }
    examples.push({ line, messages: checked });
  });
  if (examples.length === 0 && issues.length === 0) issues.push({ line: 0, message: 'dataset is empty: no examples found' });
  return { examples, issues };
}

/** Parses a dataset or throws DatasetValidationError listing every bad line. */
export function parseChatJsonl(text: string, options: ParseOptions = {}): ChatExample[] {
  const { examples, issues } = validateChatJsonl(text, options);
  if (issues.length) throw new DatasetValidationError(issues, options.name);
  return examples;
}

export async function readChatJsonl(path: string, options: ParseOptions = {}): Promise<ChatExample[]> {
  return parseChatJsonl(await readFile(path, 'utf8'), { name: path, ...options });
}

/**
 * Renders examples to token ids + assistant-only loss masks, applying the overflow policy.
 * With 'truncate', an example whose assistant tokens all fall beyond the context is an error.
 */
export function tokenizeExamples(
  examples: readonly ChatExample[],
  contextLength: number,
  overflow: OverflowPolicy = 'reject',
  tokenizer: ChatTokenizer = byteChatTokenizer,
): RenderedChat[] {
  const issues: DatasetIssue[] = [];
  const out: RenderedChat[] = [];
  for (const example of examples) {
    let rendered: RenderedChat;
    try {
      rendered = tokenizer.renderChat(example.messages);
    } catch (err) {
      issues.push({ line: example.line, message: `chat template: ${(err as Error).message}` });
      continue;
    }
    if (rendered.ids.length <= contextLength) {
      out.push(rendered);
      continue;
    }
    const cut = { ids: rendered.ids.slice(0, contextLength), lossMask: rendered.lossMask.slice(0, contextLength) };
    if (overflow === 'reject')
      issues.push({ line: example.line, message: `conversation is ${rendered.ids.length} tokens, longer than the limit of ${contextLength} tokens` });
    else if (!cut.lossMask.slice(1).some((m) => m === 1))
      issues.push({ line: example.line, message: 'no assistant tokens left after truncating to the context' });
    else out.push(cut);
  }
  if (issues.length) throw new DatasetValidationError(issues);
  return out;
}
