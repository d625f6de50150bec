/**
 * Answers a parsed chat request from a resolved backend: admits each of its `n` generations
 * through the inference service and writes them in OpenAI's format. The edge and the control
 * plane's /v1/inference/chat both answer through here.
 */
import type { FastifyReply } from "fastify";
import type { Backend, InferenceService } from "./index.js";
import type { ChatRequest } from "./openaiRequest.js";
import { clientGoneOf } from "./clientGone.js";
import { sendChat } from "./openaiResponse.js";

export async function answerChat(
  reply: FastifyReply,
  inference: InferenceService,
  backend: Backend,
  chat: ChatRequest,
  options: { model: string; queueKey: string },
): Promise<void> {
  // The client hanging up cancels a queued or running generation.
  const clientGone = clientGoneOf(reply.raw);
  const { params } = chat;
  // A seeded request stays reproducible with n > 1, yet its choices differ from each other.
  const start = (index: number) =>
    inference.chat(backend, params.seed === undefined || index === 0 ? params : { ...params, seed: (params.seed + index) % 2 ** 32 }, {
      stream: chat.stream,
      queueKey: options.queueKey,
      signal: clientGone,
    });
  await sendChat(reply, start, {
    model: options.model,
    stream: chat.stream,
    includeUsage: chat.includeUsage,
    logprobs: params.topLogprobs !== undefined,
    choices: chat.choices,
  });
}
