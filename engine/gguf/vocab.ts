/**
 * The tokenizer metadata that makes llama.cpp tokenize exactly like engine/tokenizer.ts.
 *
 * We declare a GPT-2 ("gpt2" BPE) vocabulary with no merges: llama.cpp then maps each byte to its
 * GPT-2 printable character and, with nothing to merge, emits one token per byte, i.e. our ids.
 * Special tokens are CONTROL tokens, so they are only produced from explicit token ids (or text
 * with special-token parsing on), never from user text.
 */
import { BOS_ID, BYTE_VOCAB_SIZE, END_ID, PAD_ID, SPECIAL_TOKENS } from '../tokenizer.js';
import { SVC_CHAT_TEMPLATE_JINJA } from '../infer/chat-template.js';
import { bool, i32Array, str, strArray, u32, type GgufValue } from './format.js';

const TOKEN_TYPE_NORMAL = 1;
const TOKEN_TYPE_CONTROL = 3;

/** GPT-2's bytes_to_unicode: printable bytes map to themselves, the rest to U+0100 onwards. */
export function gpt2ByteToChar(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const out: string[] = [];
  let next = 0;
  for (let b = 0; b < 256; b++) out.push(printable(b) ? String.fromCharCode(b) : String.fromCharCode(256 + next++));
  return out;
}

export function tokenizerMetadata(): Array<[string, GgufValue]> {
  const tokens = [...gpt2ByteToChar(), ...SPECIAL_TOKENS];
  const types = tokens.map((_, id) => (id < BYTE_VOCAB_SIZE ? TOKEN_TYPE_NORMAL : TOKEN_TYPE_CONTROL));
  return [
    ['tokenizer.ggml.model', str('gpt2')],
    ['tokenizer.ggml.pre', str('default')],
    ['tokenizer.ggml.tokens', strArray(tokens)],
    ['tokenizer.ggml.token_type', i32Array(types)],
    ['tokenizer.ggml.merges', strArray([])],
    ['tokenizer.ggml.bos_token_id', u32(BOS_ID)],
    ['tokenizer.ggml.eos_token_id', u32(END_ID)],
    ['tokenizer.ggml.eot_token_id', u32(END_ID)],
    ['tokenizer.ggml.padding_token_id', u32(PAD_ID)],
    // The chat template writes <|bos|> itself; adding another would shift every position.
    ['tokenizer.ggml.add_bos_token', bool(false)],
    ['tokenizer.ggml.add_eos_token', bool(false)],
    ['tokenizer.chat_template', str(SVC_CHAT_TEMPLATE_JINJA)],
  ];
}
