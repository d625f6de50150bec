"""
Writes a random-weight Hugging Face model folder of a real architecture, as transformers saves
one (config.json, bf16 model.safetensors, generation_config.json), with a real tokenizer's
tokenizer.json and tokenizer_config.json copied in. For hfTestModels.ts's buildHfFolder.

usage: hfFolder.py OUT_DIR TOKENIZER_DIR CONFIG_JSON
CONFIG_JSON: {"model_type": "qwen3" | "llama" | ..., "seed": int, ...config fields}
"""

import json
import shutil
import sys

import torch
import transformers

out_dir, tokenizer_dir, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
model_type = spec.pop("model_type")
seed = spec.pop("seed", 0)
config = transformers.AutoConfig.for_model(model_type, **spec)
torch.manual_seed(seed)
model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
with torch.no_grad():  # peaked next-token distributions, so greedy decoding is not decided by noise
    for name, p in model.named_parameters():
        if "norm" in name:
            p.copy_(1 + 0.1 * torch.randn_like(p))
        elif p.dim() == 2:
            p.copy_(torch.randn_like(p) * (6 if "embed" in name or "lm_head" in name else 1) / p.shape[1] ** 0.5)
model.to(torch.bfloat16).save_pretrained(out_dir)
for name in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copy(f"{tokenizer_dir}/{name}", f"{out_dir}/{name}")
print(json.dumps({"parameters": sum(p.numel() for p in model.parameters())}))
