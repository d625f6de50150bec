/**
 * The PEFT adapter format (what PEFT's `PeftModel.from_pretrained` and vLLM's `--lora-modules`
 * load): `adapter_model.safetensors` with Hugging Face tensor names, and `adapter_config.json`.
 *
 * Names: `base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight` [r, in] and
 * `...lora_B.weight` [out, r], the same numbers as the GGUF adapter's lora_a / lora_b.
 * Layout: llama.cpp's converter permutes the rows of q and k for llama-architecture models so its
 * adjacent-pair RoPE equals Hugging Face's rotate_half (convert_hf_to_gguf.py LlamaModel.permute).
 * Our adapters are trained against the GGUF's rows, so lora_B of q_proj and k_proj is permuted
 * back here; A (over the input) is unaffected. qwen2/qwen3 use NEOX RoPE and are not permuted.
 */
import { writeFile } from 'node:fs/promises';
import type { LoraTensors, Matrix } from '../backends/types.js';
import type { LoraConfig } from '../lora.js';
import type { ModelConfig } from '../model/config.js';

const HF_MODULE_PATH: Record<string, string> = {
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_output: 'self_attn.o_proj',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};

/** GGUF rows -> Hugging Face rows of a q or k projection output: HF[s·half + i] = GGUF[2i + s] within each head. */
export function unpermuteRows(matrix: Matrix, heads: number): Matrix {
  const [rows, cols] = matrix.shape;
  const headDim = rows / heads;
  const half = headDim / 2;
  const out = new Float32Array(matrix.data.length);
  for (let h = 0; h < heads; h++) {
    for (let s = 0; s < 2; s++) {
      for (let i = 0; i < half; i++) {
        const from = (h * headDim + 2 * i + s) * cols;
        const to = (h * headDim + s * half + i) * cols;
        out.set(matrix.data.subarray(from, from + cols), to);
      }
    }
  }
  return { shape: matrix.shape, data: out };
}

/** The adapter's tensors under PEFT's names and layout. */
export function peftTensors(tensors: LoraTensors, model: ModelConfig): Map<string, Matrix> {
  const out = new Map<string, Matrix>();
  for (const [name, matrix] of Object.entries(tensors)) {
    const match = /^blk\.(\d+)\.(\w+)\.weight\.lora_(a|b)$/.exec(name);
    const modulePath = match && HF_MODULE_PATH[match[2]];
    if (!match || !modulePath) throw new Error(`unexpected LoRA tensor ${name}`);
    const [, block, linear, part] = match;
    let value = matrix;
    if (part === 'b' && model.architecture === 'llama' && (linear === 'attn_q' || linear === 'attn_k')) {
      value = unpermuteRows(matrix, linear === 'attn_q' ? model.headCount : model.headCountKv);
    }
    out.set(`base_model.model.model.layers.${block}.${modulePath}.lora_${part.toUpperCase()}.weight`, value);
  }
  return out;
}

/** The PEFT adapter_config.json fields vLLM and PEFT read. */
export function peftAdapterConfig(config: LoraConfig, baseModelName: string): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModelName,
    r: config.r,
    lora_alpha: config.alpha,
    target_modules: config.targetModules,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
  };
}

/**
 * safetensors: an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
 * shape and byte range, then the raw little-endian data (https://github.com/huggingface/safetensors).
 */
export function encodeSafetensors(tensors: ReadonlyMap<string, Matrix>, metadata: Record<string, string> = { format: 'pt' }): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  const names = [...tensors.keys()].sort();
  for (const name of names) {
    const { shape, data } = tensors.get(name)!;
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + data.byteLength] };
    offset += data.byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8); // keeps the data 8-byte aligned, as the reference writer does
  const headerBytes = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + headerBytes.length + offset);
  out.writeBigUInt64LE(BigInt(headerBytes.length), 0);
  headerBytes.copy(out, 8);
  let at = 8 + headerBytes.length;
  for (const name of names) {
    const { data } = tensors.get(name)!;
    Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(out, at);
    at += data.byteLength;
  }
  return out;
}

/** Reads F32 safetensors (ours, and PEFT's float32 adapters) back into matrices. */
export function decodeSafetensors(buffer: Buffer): Map<string, Matrix> {
  const length = Number(buffer.readBigUInt64LE(0));
  const header = JSON.parse(buffer.toString('utf8', 8, 8 + length)) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const out = new Map<string, Matrix>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (info.dtype !== 'F32') throw new Error(`safetensors tensor ${name} is ${info.dtype}; only F32 is read`);
    const [start, end] = info.data_offsets;
    const data = new Float32Array((end - start) / 4);
    Buffer.from(data.buffer).set(buffer.subarray(8 + length + start, 8 + length + end));
    out.set(name, { shape: [info.shape[0], info.shape[1] ?? 1], data });
  }
  return out;
}

export async function writePeftAdapter(
  paths: { safetensors: string; config: string },
  tensors: LoraTensors,
  config: LoraConfig,
  model: ModelConfig,
  baseModelName: string,
): Promise<void> {
  await writeFile(paths.safetensors, encodeSafetensors(peftTensors(tensors, model)));
  await writeFile(paths.config, JSON.stringify(peftAdapterConfig(config, baseModelName), null, 2) + '\n');
}
