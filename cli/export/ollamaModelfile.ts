/**
 * An Ollama Modelfile for a base GGUF and a LoRA adapter GGUF beside it. Ollama's TEMPLATE is a Go
 * template, not the GGUF's Jinja, so the chat formats svc trains with are written out by family
 * (recognised by the markers in the GGUF's own template, or svc-tiny's vocabulary); the stop
 * tokens are the family's end-of-turn markers and the GGUF's end-of-sequence token.
 */
import type { GgufHeader } from "../../engine/gguf/format.js";

interface ChatFamily {
  name: string;
  template: string;
  stops: string[];
}

const CHATML: ChatFamily = {
  name: "ChatML",
  template: "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n",
  stops: ["<|im_end|>"],
};
const LLAMA3: ChatFamily = {
  name: "Llama 3",
  template:
    "{{- range .Messages }}<|start_header_id|>{{ .Role }}<|end_header_id|>\n\n{{ .Content }}<|eot_id|>{{ end }}<|start_header_id|>assistant<|end_header_id|>\n\n",
  stops: ["<|eot_id|>", "<|start_header_id|>"],
};
const GEMMA: ChatFamily = {
  name: "Gemma",
  template:
    '{{- range .Messages }}<start_of_turn>{{ if eq .Role "assistant" }}model{{ else }}{{ .Role }}{{ end }}\n{{ .Content }}<end_of_turn>\n{{ end }}<start_of_turn>model\n',
  stops: ["<end_of_turn>"],
};
/** svc-tiny's byte template (engine/tokenizer.ts): a role token, the text, <|end|>. */
const SVC: ChatFamily = {
  name: "svc",
  template: "{{- range .Messages }}<|{{ .Role }}|>{{ .Content }}<|end|>{{ end }}<|assistant|>",
  stops: ["<|end|>"],
};

function familyOf(header: GgufHeader): ChatFamily | undefined {
  const tokens = header.metadata.get("tokenizer.ggml.tokens")?.value;
  if (Array.isArray(tokens) && tokens[256] === "<|bos|>" && tokens[260] === "<|assistant|>") return SVC;
  const template = header.metadata.get("tokenizer.chat_template")?.value;
  if (typeof template !== "string") return undefined;
  if (template.includes("<|im_start|>")) return CHATML;
  if (template.includes("<|start_header_id|>")) return LLAMA3;
  if (template.includes("<start_of_turn>")) return GEMMA;
  return undefined;
}

/** Go template strings are written between triple quotes; a value holding them cannot be. */
const quoted = (text: string) => `"""${text}"""`;

export interface ModelfileParts {
  baseFile: string;
  adapterFile: string;
  /** The base's header: its chat template and tokens. */
  header: GgufHeader;
}

export function ollamaModelfile({ baseFile, adapterFile, header }: ModelfileParts): string {
  const family = familyOf(header);
  const tokens = header.metadata.get("tokenizer.ggml.tokens")?.value;
  const eosId = header.metadata.get("tokenizer.ggml.eos_token_id")?.value;
  const eos = Array.isArray(tokens) && typeof eosId === "number" ? tokens[eosId] : undefined;
  const stops = [...new Set([...(family?.stops ?? []), ...(typeof eos === "string" ? [eos] : [])])];
  const lines = [`# Written by svc export: the base model with the fine-tuned LoRA adapter.`, `FROM ./${baseFile}`, `ADAPTER ./${adapterFile}`];
  if (family) lines.push(`# The ${family.name} chat format the adapter was trained with.`, `TEMPLATE ${quoted(family.template)}`);
  else lines.push("# No TEMPLATE: Ollama reads the chat template from the GGUF.");
  for (const stop of stops) lines.push(`PARAMETER stop ${JSON.stringify(stop)}`);
  lines.push("PARAMETER temperature 0");
  return lines.join("\n") + "\n";
}
