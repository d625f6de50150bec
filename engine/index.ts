/**
 * Public surface of the model engine, for the trainer and inference workers and the CLI.
 * Everything here is plain library code: no HTTP, no process management. Training blocks the
 * event loop (tfjs-wasm), so call trainLora from a worker process, never from a server.
 */
export { initTf } from './backend.js';
export {
  SPECIAL_TOKENS, VOCAB_SIZE, BOS_ID, END_ID, SYSTEM_ID, USER_ID, ASSISTANT_ID, PAD_ID,
  encodeText, decodeTokens, renderChat, renderGenerationPrompt,
  type ChatMessage, type ChatRole, type RenderedChat,
} from './tokenizer.js';
export { SVC_CHAT_TEMPLATE_JINJA, promptTokens, promptText } from './infer/chat-template.js';
export { SVC_TINY, TEST_TINY, type ModelConfig } from './model/config.js';
export { initWeights, countParameters, disposeWeights, type ModelWeights } from './model/weights.js';
export { DEFAULT_TARGET_MODULES, HF_MODULE_TO_GGUF, initLora, normalizeTargetModules, type LoraAdapter, type LoraConfig } from './lora.js';
export {
  parseChatJsonl, validateChatJsonl, readChatJsonl, tokenizeExamples, DatasetValidationError,
  type ChatExample, type DatasetIssue, type OverflowPolicy, type ParseOptions,
} from './data/chat-jsonl.js';
export { loadModelGguf, saveModelGguf, configFromGguf, type LoadedModel } from './gguf/model-file.js';
export { saveAdapter, loadAdapterGguf, peftAdapterConfig } from './gguf/adapter-file.js';
export { readGgufFile, decodeGguf } from './gguf/reader.js';
export { writeGgufFile, encodeGguf } from './gguf/writer.js';
export { trainLora, resolveTotalSteps, type TrainLoraOptions, type TrainLoraResult, type TrainingArtifact, type TrainLog } from './train/lora-trainer.js';
export { pretrain, type PretrainOptions } from './train/pretrain.js';
export { QUICKSTART_HYPERPARAMETERS } from './train/quickstart.js';
export { generateGreedyTfjs, type TfjsGreedyOptions } from './infer/tfjs-generate.js';
export {
  loadLlamaCppModel, streamGenerate, LlamaCppModel, LlamaCppSession, ContextLengthExceededError,
  type LoadLlamaCppOptions, type SessionOptions, type LoraAdapterRef, type GenerateRequest, type GenerateResult, type FinishReason,
} from './infer/llama-cpp.js';
