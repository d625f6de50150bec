/**
 * The one chat template of the svc model family, in the two forms the two runtimes need.
 *
 * - Token form (`promptTokens`): what the serving side feeds llama.cpp and what tfjs trains on.
 *   Both come from engine/tokenizer.ts, so a prompt is rendered identically in training and
 *   serving, and user text can never smuggle in a special token.
 * - Jinja form (`SVC_CHAT_TEMPLATE_JINJA`): written into the GGUF as `tokenizer.chat_template`
 *   so third-party llama.cpp front-ends (llama-server, node-llama-cpp's JinjaTemplateChatWrapper)
 *   render the same text. It is kept equal to the token form by a unit test.
 */
import { renderGenerationPrompt, type ChatMessage } from '../tokenizer.js';

export type { ChatMessage, ChatRole } from '../tokenizer.js';

export const SVC_CHAT_TEMPLATE_JINJA =
  "{{ bos_token }}{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + '<|end|>' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}";

/** Token ids of the prompt that asks the model for the next assistant message. */
export function promptTokens(messages: readonly ChatMessage[]): number[] {
  return renderGenerationPrompt(messages);
}

/** The same prompt as text with special-token spellings (what the Jinja template renders). */
export function promptText(messages: readonly ChatMessage[]): string {
  let text = '<|bos|>';
  for (const message of messages) text += `<|${message.role}|>${message.content}<|end|>`;
  return text + '<|assistant|>';
}
