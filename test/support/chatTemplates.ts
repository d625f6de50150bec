/**
 * Shared by the chat-tokenizer tests: the real templates they cover, and vocabulary-only GGUFs
 * of llama.cpp rewritten with a chosen tokenizer.chat_template.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { str } from "../../engine/gguf/format.js";
import { decodeGguf } from "../../engine/gguf/reader.js";
import { encodeGguf } from "../../engine/gguf/writer.js";
import { llamaCppSource, vocabGguf } from "./llamaCppSource.js";

export const TEMPLATE_CASES = [
  { name: "Llama 3.1", vocab: "llama-bpe", template: "meta-llama-Llama-3.1-8B-Instruct", end: "<|eot_id|>" },
  { name: "Qwen2.5", vocab: "qwen2", template: "Qwen-Qwen2.5-7B-Instruct", end: "<|im_end|>" },
  { name: "Qwen3", vocab: "qwen2", template: "Qwen-Qwen3-0.6B", end: "<|im_end|>" },
] as const;

export function realTemplate(name: string): Promise<string> {
  return readFile(path.join(llamaCppSource(), "models/templates", `${name}.jinja`), "utf8");
}

/** A copy of a vocabulary-only GGUF that carries `tokenizer.chat_template` (none when null). */
export async function vocabWithTemplate(dir: string, vocab: string, template: string | null): Promise<string> {
  const file = decodeGguf(await readFile(vocabGguf(vocab)));
  if (template === null) file.metadata.delete("tokenizer.chat_template");
  else file.metadata.set("tokenizer.chat_template", str(template));
  const out = path.join(dir, `${vocab}-${template === null ? "none" : template.length}.gguf`);
  await writeFile(out, encodeGguf(file));
  return out;
}
