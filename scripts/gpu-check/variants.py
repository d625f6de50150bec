"""
Which changes to a transformers + PEFT LoRA step move its MFU on this GPU: each variant of the plain
loop (gpu_check.plain_run's) on one shape, in one process, so the ratios compare like with like.
`python3 scripts/gpu-check/variants.py --shape qwen3-1.7b`.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch
from gpu_check import HF_PROJECTIONS, SHAPES, batch, hf_config, peak_tflops


def step_time(s, b, t, rank, tf32=False, adapter_bf16=False, compiled=False, steps=6, warmup=3):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.cuda.reset_peak_memory_stats()
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(hf_config(s), dtype=torch.bfloat16, attn_implementation="sdpa")
    model = get_peft_model(
        model, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0, target_modules=HF_PROJECTIONS), autocast_adapter_dtype=not adapter_bf16
    )
    trainable = [p for p in model.parameters() if p.requires_grad]
    parameters = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    optimizer = torch.optim.AdamW(trainable, lr=1e-4)
    forward = torch.compile(model) if compiled else model
    inputs, targets, _ = batch(s["vocab"], b, t, 2)
    ids = torch.from_numpy(np.concatenate([inputs, targets[:, -1:]], axis=1).astype(np.int64)).cuda()
    times = []
    for _ in range(warmup + steps):
        torch.cuda.synchronize()
        started = time.perf_counter()
        loss = forward(input_ids=ids, labels=ids).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()
        times.append(time.perf_counter() - started)
    seconds = float(np.median(times[warmup:]))
    result = {"tokensPerSecond": b * t / seconds, "parameters": parameters, "peakGiB": torch.cuda.max_memory_allocated() / 2**30}
    del model, forward, optimizer
    torch.cuda.empty_cache()
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="qwen3-1.7b")
    parser.add_argument("--rank", type=int, default=16)
    args = parser.parse_args()
    s = SHAPES[args.shape]
    peak = peak_tflops(torch.cuda.get_device_name(0))
    variants = [
        ("baseline 4x2048", dict(b=4, t=2048)),
        ("tf32 matmuls", dict(b=4, t=2048, tf32=True)),
        ("bf16 adapter", dict(b=4, t=2048, adapter_bf16=True)),
        ("batch 8x2048", dict(b=8, t=2048)),
        ("torch.compile", dict(b=4, t=2048, compiled=True)),
        ("compile + bf16 adapter", dict(b=4, t=2048, compiled=True, adapter_bf16=True)),
    ]
    print(f"| {args.shape} variant | tok/s | MFU | peak GiB |\n|---|---|---|---|", flush=True)
    for name, options in variants:
        try:
            r = step_time(s, rank=args.rank, **options)
            mfu = 4 * r["parameters"] * r["tokensPerSecond"] / (peak * 1e12) if peak else float("nan")
            print(f"| {name} | {r['tokensPerSecond']:.0f} | {100 * mfu:.1f}% | {r['peakGiB']:.1f} |", flush=True)
        except Exception as err:
            print(f"| {name} | failed: {type(err).__name__}: {str(err)[:200]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
