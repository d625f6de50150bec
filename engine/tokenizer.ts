/**
 * Byte-level tokenizer and chat template of the svc model family.
 *
 * Why bytes: no tokenizer has to be trained or shipped, any UTF-8 text round-trips exactly, and
 * llama.cpp tokenizes it identically through a GPT-2 style vocabulary with no merges (see
 * engine/gguf/vocab.ts). Ids 0..255 are the raw bytes; the special tokens follow.
 *
 * Template (one line per turn, shown with newlines only for reading):
 *   <|bos|><|system|>You are terse.<|end|>
 *   <|user|>Hi<|end|>
 *   <|assistant|>Hello!<|end|>
 * Generation prompts end with `<|assistant|>`; the model stops by emitting `<|end|>`, which the
 * GGUF declares as the end-of-generation token.
 */

/** Special tokens, in id order after the 256 bytes. Their texts are what llama.cpp matches. */
export const SPECIAL_TOKENS = ['<|bos|>', '<|end|>', '<|system|>', '<|user|>', '<|assistant|>', '<|pad|>'] as const;
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

export const BYTE_VOCAB_SIZE = 256;
export const BOS_ID = 256;
/** Ends every turn; also the end-of-generation token (llama.cpp eos/eot). */
export const END_ID = 257;
export const SYSTEM_ID = 258;
export const USER_ID = 259;
export const ASSISTANT_ID = 260;
/** Pads batches; never trained on (mask 0) and never produced. */
export const PAD_ID = 261;
export const VOCAB_SIZE = BYTE_VOCAB_SIZE + SPECIAL_TOKENS.length;

export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: ChatRole;
  content: string;
}

const ROLE_TOKEN: Record<ChatRole, number> = { system: SYSTEM_ID, user: USER_ID, assistant: ASSISTANT_ID };

const utf8Encoder = new TextEncoder();

/** Raw text to byte ids. Special-token texts inside user content stay plain bytes (no injection). */
export function encodeText(text: string): number[] {
  return Array.from(utf8Encoder.encode(text));
}

/** Byte ids back to text; special tokens are dropped. Invalid UTF-8 becomes U+FFFD. */
export function decodeTokens(ids: readonly number[]): string {
  const bytes = ids.filter((id) => id >= 0 && id < BYTE_VOCAB_SIZE);
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

export interface RenderedChat {
  /** Token ids of the whole conversation, starting with <|bos|>. */
  ids: number[];
  /** 1 where the token is an assistant token the model should learn to produce, else 0. */
  lossMask: number[];
}

/**
 * Renders a conversation for training. The mask is 1 on the assistant's content and on its
 * closing <|end|> (so the model learns to stop), 0 on the role token itself and everything else:
 * we train what the assistant says, not what the user says.
 */
export function renderChat(messages: readonly ChatMessage[]): RenderedChat {
  const ids: number[] = [BOS_ID];
  const lossMask: number[] = [0];
  for (const message of messages) {
    const learn = message.role === 'assistant' ? 1 : 0;
    ids.push(ROLE_TOKEN[message.role]);
    lossMask.push(0);
    for (const byte of encodeText(message.content)) {
      ids.push(byte);
      lossMask.push(learn);
    }
    ids.push(END_ID);
    lossMask.push(learn);
  }
  return { ids, lossMask };
}

/**
 * Renders the prompt for generating the next assistant turn: the conversation followed by an
 * open `<|assistant|>`. This is exactly the prefix `renderChat` produces for that turn.
 */
export function renderGenerationPrompt(messages: readonly ChatMessage[]): number[] {
  return [...renderChat(messages).ids, ASSISTANT_ID];
}
