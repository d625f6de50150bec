/**
 * The ChatTokenizer a base GGUF trains with: svc's byte tokenizer for the svc-tiny family, the
 * file's own tokenizer and chat template (through llama.cpp) for every other model. Serving makes
 * the same choice (engine/infer/llama-cpp.ts), so a model is trained on the tokens it is prompted with.
 */
import { readGgufHeader } from '../gguf/reader.js';
import { byteChatTokenizer, isSvcVocabulary, type ChatTokenizer } from './chat-tokenizer.js';

export async function loadModelChatTokenizer(modelPath: string): Promise<ChatTokenizer> {
  const header = await readGgufHeader(modelPath);
  if (isSvcVocabulary(header.metadata.get('tokenizer.ggml.tokens')?.value)) return byteChatTokenizer;
  const { loadGgufChatTokenizer } = await import('./gguf-chat-tokenizer.js');
  return loadGgufChatTokenizer(modelPath);
}
