/**
 * The Playground's `POST /api/inference/chat` body (`{target, messages, temperature?, maxTokens?}`,
 * see ui-shared/transport.ts ChatRequest) turned into the cloud's OpenAI-style
 * `/v1/inference/chat` body. The route's contract is a stream: without `stream: true` the cloud
 * answers with one JSON completion, which the Playground's SSE reader would drop.
 * `maxTokens` is the page's spelling; the cloud reads `max_tokens`.
 */
import type { InferenceChatInput } from "../sdk/client.js";

export function cloudChatBody(body: Record<string, unknown>): InferenceChatInput {
  const { maxTokens, ...rest } = body;
  return {
    ...(rest as unknown as InferenceChatInput),
    stream: typeof rest.stream === "boolean" ? rest.stream : true,
    ...(maxTokens !== undefined && rest.max_tokens === undefined ? { max_tokens: maxTokens as number } : {}),
  };
}
