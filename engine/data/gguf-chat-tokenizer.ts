/**
 * ChatTokenizer for a real GGUF model (llama / qwen2 / qwen3 ...): the model's own tokenizer,
 * run by llama.cpp, and its own `tokenizer.chat_template`, rendered with @huggingface/jinja.
 * Training, dataset validation and serving (engine/infer/llama-cpp.ts) all use this, so the model
 * is trained on exactly the tokens it is later prompted with.
 *
 * Method (how assistant spans are found):
 *   1. Render the whole conversation once (add_generation_prompt=false) and tokenize that text
 *      whole, as llama.cpp would: special tokens parsed, BOS as llama.cpp serving adds it
 *      (tokenizer.ggml.add_bos_token; a leading bos_token text the template emits is dropped
 *      first, as llama.cpp's common/chat.cpp does, so there is never a double BOS).
 *   2. For assistant message i, render the generation prompt for it (messages before i,
 *      add_generation_prompt=true) and the conversation up to and including i. If both texts are
 *      prefixes of the whole text, the turn is trained: its tokens start where the tokenised
 *      prompt stops agreeing with the whole (normally exactly at the prompt's length, i.e. the
 *      very prompt serving would use) and the mask runs to the first end-of-generation token
 *      (eos / eot / <|im_end|> ...) inclusive, so the model learns to stop. Tokens after that
 *      (Qwen's trailing "\n") and the assistant header stay 0.
 *
 * Limits, chosen on purpose:
 *   - Templates that rewrite earlier turns: Qwen3 renders the last assistant turn with a
 *     (possibly empty) <think></think> block but drops it from earlier turns. An earlier turn is
 *     then not a prefix of the whole rendering, so it is NOT trained (mask 0, still context):
 *     every trained turn is exactly what the model sees and produces when it generates that turn.
 *     A template whose generation prompt no rendered turn continues (Gemma 4's empty thought
 *     channel) trains its last assistant turn as generation prompt + that turn's text. Only when
 *     no assistant turn can be trained is the conversation an error.
 *   - If BPE merges across the header/content boundary (content starting with whitespace that
 *     joins the header's trailing newline), the merged token is trained as the first content
 *     token; the sequence is still llama.cpp's whole-text tokenisation.
 *   - A trailing eos_token text is not stripped (llama.cpp strips it only when add_eos_token).
 *   - Templates get messages, add_generation_prompt, bos_token, eos_token and
 *     enable_thinking=false (plus the jinja library's own raise_exception, whose message becomes
 *     the dataset issue) only: no tools, no strftime_now (so Llama 3's date line is its fixed
 *     default). enable_thinking=false is Qwen3's non-thinking mode: the generation prompt already
 *     holds the empty <think></think> block, so a trained turn is just the answer (chat datasets
 *     carry no reasoning) and served replies carry no think block. Other templates ignore it.
 *
 * A GGUF without a chat template gets ChatML (`templateSource: 'fallback'`) so the trainer can
 * say so; if the vocabulary lacks <|im_end|>, the marker is plain text and is trained as text,
 * and serving stops on it as a stop string.
 */
import { Template } from '@huggingface/jinja';
import type { LlamaModel, Token } from 'node-llama-cpp';
import type { ChatMessage, RenderedChat } from '../tokenizer.js';
import type { ChatTemplateSource, ChatTokenizer } from './chat-tokenizer.js';

/** ChatML, used when a GGUF has no tokenizer.chat_template (Qwen's format, widely understood). */
export const FALLBACK_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
const FALLBACK_END_OF_TURN = '<|im_end|>';
/** Qwen3's switch: fine-tune and serve in non-thinking mode (see the header). */
const ENABLE_THINKING = false;

export class ChatTemplateError extends Error {
  readonly code = 'chat_template_error';
}

export interface GgufChatTokenizerOptions {
  /** Overrides the GGUF's template (tests, or a user-supplied template). */
  chatTemplate?: string;
  /** Disposes the model with the tokenizer (true when the tokenizer loaded it). */
  ownsModel?: boolean;
}

/** Loads only the vocabulary of a GGUF (no weights) and builds its ChatTokenizer. */
export async function loadGgufChatTokenizer(modelPath: string, options: Omit<GgufChatTokenizerOptions, 'ownsModel'> = {}): Promise<ChatTokenizer> {
  const { getLlamaRuntime } = await import('../infer/llamaRuntime.js');
  const { llama } = await getLlamaRuntime();
  const model = await llama.loadModel({ modelPath, gpuLayers: 0, vocabOnly: true });
  return ggufChatTokenizer(model, { ...options, ownsModel: true });
}

/** The ChatTokenizer of an already loaded model (serving reuses its model). */
export function ggufChatTokenizer(model: LlamaModel, options: GgufChatTokenizerOptions = {}): ChatTokenizer {
  const tokenizerMeta = model.fileInfo.metadata.tokenizer as { chat_template?: unknown; ggml?: { tokens?: readonly unknown[] } } | undefined;
  const stored = typeof tokenizerMeta?.chat_template === 'string' ? tokenizerMeta.chat_template : undefined;
  const source: ChatTemplateSource = options.chatTemplate !== undefined || stored !== undefined ? 'gguf' : 'fallback';
  const template = new Template(options.chatTemplate ?? stored ?? FALLBACK_CHAT_TEMPLATE);
  const vocabSize = tokenizerMeta?.ggml?.tokens?.length ?? 0;
  if (vocabSize === 0) throw new Error('GGUF has no tokenizer.ggml.tokens');

  const bos = model.tokens.bos;
  const bosText = model.tokens.bosString ?? '';
  const eosText = model.tokens.eosString ?? '';
  const addBos = model.tokens.shouldPrependBosToken && bos !== null;
  const eosIds: number[] = [];
  for (let id = 0; id < vocabSize; id++) if (model.isEogToken(id as Token)) eosIds.push(id);
  const eog = new Set(eosIds);
  // Fallback markers that are not tokens of this vocabulary are plain text: serving stops on them.
  const stopStrings = source === 'fallback' && model.tokenize(FALLBACK_END_OF_TURN, true).length !== 1 ? [FALLBACK_END_OF_TURN] : [];

  const render = (messages: readonly ChatMessage[], addGenerationPrompt: boolean): string =>
    template.render({
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      add_generation_prompt: addGenerationPrompt,
      bos_token: bosText,
      eos_token: eosText,
      enable_thinking: ENABLE_THINKING,
    });

  /** llama.cpp's tokenisation of a rendered prompt, BOS included as serving adds it. */
  const tokenizeText = (text: string): number[] => {
    const body = addBos && bosText && text.startsWith(bosText) ? text.slice(bosText.length) : text;
    const ids = model.tokenize(body, true) as number[];
    return addBos ? [bos as number, ...ids] : ids;
  };

  const renderChat = (messages: readonly ChatMessage[]): RenderedChat => {
    const full = render(messages, false);
    const ids = tokenizeText(full);
    const lossMask = new Array<number>(ids.length).fill(0);
    let trained = 0;
    messages.forEach((message, i) => {
      if (message.role !== 'assistant') return;
      const promptText = render(messages.slice(0, i), true);
      const turnText = render(messages.slice(0, i + 1), false);
      if (!full.startsWith(promptText) || !full.startsWith(turnText) || turnText.length <= promptText.length) return;
      const start = commonPrefixLength(ids, tokenizeText(promptText));
      const limit = Math.max(start + 1, commonPrefixLength(ids, tokenizeText(turnText)));
      for (let t = start; t < limit && t < ids.length; t++) {
        lossMask[t] = 1;
        if (eog.has(ids[t])) break;
      }
      trained++;
    });
    if (trained === 0) {
      const generated = lastTurnAsGenerated(messages);
      if (generated) return generated;
      throw new ChatTemplateError('the chat template renders no assistant turn as a continuation of its prompt, so there is nothing to train on');
    }
    return { ids, lossMask };
  };

  /**
   * Templates whose generation prompt holds what a rendered turn does not (Gemma 4's non-thinking
   * prompt ends in an empty thought channel that history turns drop): the last assistant turn is
   * trained as serving produces it, the generation prompt followed by the turn's own text after
   * the header both share. Earlier turns are context, as with Qwen3.
   */
  const lastTurnAsGenerated = (messages: readonly ChatMessage[]): RenderedChat | undefined => {
    if (messages.at(-1)?.role !== 'assistant') return undefined;
    const promptText = render(messages.slice(0, -1), true);
    const turnText = render(messages, false);
    let shared = 0;
    while (shared < promptText.length && shared < turnText.length && promptText[shared] === turnText[shared]) shared++;
    const answer = turnText.slice(shared);
    if (!answer.includes(messages.at(-1)!.content)) return undefined;
    const ids = tokenizeText(promptText + answer);
    const start = commonPrefixLength(ids, tokenizeText(promptText));
    const lossMask = ids.map((_, t) => (t >= start ? 1 : 0));
    const end = ids.findIndex((id, t) => t >= start && eog.has(id));
    if (end >= 0) lossMask.fill(0, end + 1);
    return { ids, lossMask };
  };

  return {
    renderChat,
    renderGenerationPrompt: (messages) => tokenizeText(render(messages, true)),
    // Padding is masked; the eos id is always a valid id.
    padId: model.tokens.eos ?? eosIds[0] ?? 0,
    eosIds,
    vocabSize,
    templateSource: source,
    stopStrings,
    dispose: async () => {
      if (options.ownsModel) await model.dispose();
    },
  };
}

function commonPrefixLength(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
