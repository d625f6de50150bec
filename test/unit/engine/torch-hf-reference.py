"""
Hugging Face's implementation of the same model, for torch-hf-reference.test.ts: builds
LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM from a GGUF's weights by hand (read with
gguf-py; llama's q/k rows put back in Hugging Face's order), not through transformers' GGUF loader
that the backend uses, loads svc's PEFT
adapter with PeftModel.from_pretrained, and prints the masked loss of a batch, the last-position
logits of its first row and the LoRA gradients (PEFT names, Hugging Face layout) as one JSON line.

usage: torch-hf-reference.py SVC_TORCH_DIR GGUF ADAPTER_DIR REQUEST_JSON
REQUEST_JSON: {"config": ModelConfig, "batchSize", "length", "inputs", "targets", "mask"}
"""

import json
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, sys.argv[1])
import peft  # noqa: E402
import transformers  # noqa: E402
from gguf import dequantize  # noqa: E402
from svc_torch.gguf_base import open_gguf  # noqa: E402  (gguf-py's reader, stepping over the vocabulary)

gguf_path, adapter_dir = sys.argv[2], sys.argv[3]
with open(sys.argv[4]) as f:
    request = json.load(f)
cfg = request["config"]
arch = cfg["architecture"]
heads, kv_heads, head_dim = cfg["headCount"], cfg["headCountKv"], cfg["headDim"]

common = dict(
    vocab_size=cfg["vocabSize"],
    hidden_size=cfg["embeddingLength"],
    intermediate_size=cfg["feedForwardLength"],
    num_hidden_layers=cfg["blockCount"],
    num_attention_heads=heads,
    num_key_value_heads=kv_heads,
    head_dim=head_dim,
    rms_norm_eps=cfg["rmsNormEpsilon"],
    rope_theta=cfg["ropeFreqBase"],
    max_position_embeddings=cfg["contextLength"],
    tie_word_embeddings=bool(cfg.get("tiedOutput")),
    attn_implementation="eager",
    torch_dtype=torch.float32,
)
if arch == "llama":
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**common, attention_bias=False, mlp_bias=False))
elif arch == "qwen2":
    model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(**common))
elif arch == "qwen3":
    model = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**common, attention_bias=False))
else:
    raise SystemExit(f"no Hugging Face class for {arch}")

tensors = {t.name: t for t in open_gguf(gguf_path).tensors}


def w(name):
    t = tensors[name]
    return torch.from_numpy(np.array(dequantize(t.data, t.tensor_type), dtype=np.float32))


def hf_rows(t, n_heads):
    """GGUF rows -> Hugging Face rows of a llama q/k projection (inverse of convert_hf_to_gguf's permute)."""
    return t.reshape(n_heads, t.shape[0] // n_heads // 2, 2, *t.shape[1:]).transpose(1, 2).reshape(t.shape)


state = {"model.embed_tokens.weight": w("token_embd.weight"), "model.norm.weight": w("output_norm.weight")}
if not cfg.get("tiedOutput"):
    state["lm_head.weight"] = w("output.weight")
linears = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
for b in range(cfg["blockCount"]):
    hf = f"model.layers.{b}."
    state[hf + "input_layernorm.weight"] = w(f"blk.{b}.attn_norm.weight")
    state[hf + "post_attention_layernorm.weight"] = w(f"blk.{b}.ffn_norm.weight")
    for ours, theirs in linears.items():
        t = w(f"blk.{b}.{ours}.weight")
        if arch == "llama" and ours in ("attn_q", "attn_k"):
            t = hf_rows(t, heads if ours == "attn_q" else kv_heads)
        state[hf + theirs + ".weight"] = t
    if cfg.get("attentionBias"):
        for ours in ("attn_q", "attn_k", "attn_v"):
            state[hf + linears[ours] + ".bias"] = w(f"blk.{b}.{ours}.bias")
    if cfg.get("qkNorm"):
        state[hf + "self_attn.q_norm.weight"] = w(f"blk.{b}.attn_q_norm.weight")
        state[hf + "self_attn.k_norm.weight"] = w(f"blk.{b}.attn_k_norm.weight")
missing, unexpected = model.load_state_dict(state, strict=False)
allowed_missing = {"lm_head.weight"} if cfg.get("tiedOutput") else set()
if set(missing) - allowed_missing or unexpected:
    raise SystemExit(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
if cfg.get("tiedOutput"):
    model.tie_weights()

model = peft.PeftModel.from_pretrained(model.float(), adapter_dir, is_trainable=True)
model.eval()  # no dropout anywhere (svc's adapters have none either)

b, t = request["batchSize"], request["length"]
inputs = torch.tensor(request["inputs"], dtype=torch.long).reshape(b, t)
targets = torch.tensor(request["targets"], dtype=torch.long).reshape(b, t)
mask = torch.tensor(request["mask"], dtype=torch.float32).reshape(b, t)
logits = model(input_ids=inputs).logits.float()
loss = (F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none") * mask.reshape(-1)).sum() / mask.sum()
loss.backward()
grads = {}
for name, p in model.named_parameters():
    if p.requires_grad:
        grads[name.replace(".default", "")] = p.grad.detach().float().reshape(-1).tolist()
print(
    json.dumps(
        {
            "loss": float(loss),
            "lastLogits": logits[0, -1].detach().tolist(),
            "grads": grads,
            "versions": {"transformers": transformers.__version__, "peft": peft.__version__},
        }
    )
)
