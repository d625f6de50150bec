"""
GPU check for the torch backend's quantised base (issue 25, svc_torch/quantized.py), for a lent CUDA machine with
torch and peft: `PYTHONPATH=engine/backends/torch/python python scripts/device/quantized-base.py` from the repo root.

On random Q8_0 / Q4_K / Q6_K blocks of a Qwen3-4B MLP projection's shape (9728 x 2560): the CUDA dequantisers give the
CPU's floats bit for bit, and a forward + backward through QuantizedLinear under PEFT LoRA takes this long and this
much peak GPU memory against an nn.Linear holding the same weight in bfloat16, at 1 x 256 and 4 x 512 tokens.
Writes $OUT/quantized-base.json (or ./quantized-base.json) and prints it.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
import torch
from peft import LoraConfig, get_peft_model

from svc_torch.quantized import QUANT_TYPES, QuantizedLinear, dequantize

OUT, IN = 9728, 2560


def random_blocks(qtype: int, rng) -> torch.Tensor:
    size, per_block, _ = QUANT_TYPES[qtype]
    raw = rng.integers(0, 256, (OUT * IN // per_block, size), dtype=np.uint8)
    scales = (rng.standard_normal(raw.shape[0]) * 1e-3).astype(np.float16).view(np.uint8).reshape(-1, 2)
    at = {8: [0], 12: [0, 2], 14: [208]}[qtype]  # where the float16 scales sit in a block
    for offset in at:
        raw[:, offset : offset + 2] = scales
    return torch.from_numpy(raw.reshape(OUT, -1))


def timed_step(model, tokens: int, device) -> tuple[float, int]:
    x = torch.randn(1, tokens, IN, device=device, dtype=torch.bfloat16, requires_grad=True)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    started = time.perf_counter()
    for _ in range(5):
        model(x).float().pow(2).mean().backward()
    torch.cuda.synchronize()
    return (time.perf_counter() - started) / 5, torch.cuda.max_memory_allocated() - before


def wrapped(layer, device):
    model = torch.nn.Sequential()
    model.add_module("norm", torch.nn.LayerNorm(IN))
    model.add_module("proj", layer)
    model.to(device)
    model.requires_grad_(False)
    return get_peft_model(model, LoraConfig(r=8, lora_alpha=16, target_modules=["proj"]))


def main() -> None:
    device = torch.device("cuda")
    rng = np.random.default_rng(1)
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "types": {}}
    for qtype, name in ((8, "Q8_0"), (12, "Q4_K"), (14, "Q6_K")):
        blocks = random_blocks(qtype, rng)
        on_cpu = dequantize(blocks, qtype, (OUT, IN))
        on_gpu = dequantize(blocks.to(device), qtype, (OUT, IN)).cpu()
        plain = torch.nn.Linear(IN, OUT, bias=False, dtype=torch.bfloat16)
        with torch.no_grad():
            plain.weight.copy_(on_cpu)
        row = {"bitExact": bool(torch.equal(on_cpu.view(torch.int32), on_gpu.view(torch.int32)))}
        kept, dense = wrapped(QuantizedLinear(IN, OUT, qtype, blocks), device), wrapped(plain, device)
        for tokens in (256, 2048):
            k_time, k_mem = timed_step(kept, tokens, device)
            d_time, d_mem = timed_step(dense, tokens, device)
            row[f"{tokens} tokens"] = {
                "keptMs": k_time * 1e3,
                "bf16Ms": d_time * 1e3,
                "speedRatio": d_time / k_time,
                "keptPeakBytes": k_mem,
                "bf16PeakBytes": d_mem,
            }
        row["blockBytes"] = int(blocks.numel())
        result["types"][name] = row
    text = json.dumps(result, indent=2)
    print(text)
    with open(os.path.join(os.environ.get("OUT", "."), "quantized-base.json"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
