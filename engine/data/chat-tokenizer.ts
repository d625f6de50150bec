/**
 * One interface for "turn a conversation into training tokens", so training, validation and
 * serving of any model tokenize a chat the same way.
 *
 * Two implementations:
 * - `byteChatTokenizer` (here): svc-tiny's byte vocabulary and template (engine/tokenizer.ts),
 *   behaviour unchanged.
 * - `loadGgufChatTokenizer` (engine/data/gguf-chat-tokenizer.ts): a real GGUF's own tokenizer
 *   (through llama.cpp) and its `tokenizer.chat_template`.
 *
 * This file imports nothing heavy: the dataset validator and the SDK depend on the type only.
 */
import {
  END_ID,
  PAD_ID,
  VOCAB_SIZE,
  renderChat as renderByteChat,
  renderGenerationPrompt as renderByteGenerationPrompt,
  type ChatMessage,
  type RenderedChat,
} from '../tokenizer.js';

export type { ChatMessage, RenderedChat } from '../tokenizer.js';

/** Where the chat template came from: the GGUF itself, our ChatML fallback, or svc's own. */
export type ChatTemplateSource = 'gguf' | 'fallback' | 'svc';

export interface ChatTokenizer {
  /**
   * Token ids of a whole conversation and its loss mask: 1 on the tokens of each assistant
   * message's content and on the end-of-turn token the template emits right after it (so the
   * model learns to stop), 0 on everything else, the assistant header included.
   */
  renderChat(messages: readonly ChatMessage[]): RenderedChat;
  /** The prompt that asks for the next assistant message: exactly what serving feeds the model. */
  renderGenerationPrompt(messages: readonly ChatMessage[]): number[];
  /** A valid id (< vocabSize) to pad batches with; padded positions are masked anyway. */
  readonly padId: number;
  /** Tokens that end generation (end of turn / end of sequence). */
  readonly eosIds: readonly number[];
  readonly vocabSize: number;
  readonly templateSource: ChatTemplateSource;
  /** Text stop strings serving should add, for a fallback template whose markers are not tokens. */
  readonly stopStrings: readonly string[];
  /** Frees the native model behind the tokenizer, if any. */
  dispose(): Promise<void>;
}

/** svc-tiny's byte tokenizer and template, unchanged, behind the common interface. */
export const byteChatTokenizer: ChatTokenizer = {
  renderChat: (messages) => renderByteChat(messages),
  renderGenerationPrompt: (messages) => renderByteGenerationPrompt(messages),
  padId: PAD_ID,
  eosIds: [END_ID],
  vocabSize: VOCAB_SIZE,
  templateSource: 'svc',
  stopStrings: [],
  dispose: async () => undefined,
};

/** True when a GGUF's tokenizer.ggml.tokens is svc's byte vocabulary (the svc-tiny family). */
export function isSvcVocabulary(tokens: unknown): boolean {
  return Array.isArray(tokens) && tokens[256] === '<|bos|>' && tokens[260] === '<|assistant|>';
}
