"""
The bench's anchor: the plain transformers + PEFT LoRA loop anyone would write, with nothing of
svc in it: AutoModelForCausalLM.from_config (random weights) in the given dtype, get_peft_model,
torch.optim.AdamW, loss from the model's logits. The torch backend's tokens/s is reported as a
ratio of this loop's on the same shape, batch, LoRA, dtype and threads, measured in the same run.

Reads one JSON object on stdin:
  {hf_config: {model_type, ...transformers config fields}, shapes: [[batch, length], ...], steps, warmup,
   lora: {r, alpha, target_modules}, dtype, threads, checkpointing, device?}
and prints one JSON line: {tokensPerSecond, stepSeconds, peakRssBytes, peakDeviceBytes, parameters, device, dtype}.
"""

import json
import resource
import sys
import time

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoConfig, AutoModelForCausalLM


def main():
    job = json.loads(sys.stdin.read())
    torch.set_num_threads(int(job["threads"]))
    torch.manual_seed(0)
    device = torch.device(job.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = getattr(torch, job["dtype"])
    fields = dict(job["hf_config"])
    config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation="sdpa" if dtype != torch.float32 or device.type != "cpu" else "eager")
    model.requires_grad_(False)
    lora = job["lora"]
    model = get_peft_model(model, LoraConfig(r=lora["r"], lora_alpha=lora["alpha"], lora_dropout=0.0, target_modules=lora["target_modules"]))
    if job.get("checkpointing"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=1e-4, foreach=True)
    vocab = int(config.vocab_size)
    generator = torch.Generator().manual_seed(1)
    tokens = 0
    started = 0.0
    for step in range(job["warmup"] + job["steps"]):
        if step == job["warmup"]:
            if device.type == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        b, t = (int(n) for n in job["shapes"][step % len(job["shapes"])][:2])
        ids = torch.randint(0, vocab, (b, t), generator=generator).to(device)
        targets = torch.randint(0, vocab, (b, t), generator=generator).to(device)
        logits = model(input_ids=ids, use_cache=False).logits
        loss = F.cross_entropy(logits.float().reshape(-1, vocab), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step >= job["warmup"]:
            tokens += b * t
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "tokensPerSecond": tokens / seconds,
                "stepSeconds": seconds / job["steps"],
                "peakRssBytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "peakDeviceBytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0,
                "parameters": sum(p.numel() for n, p in model.named_parameters() if "lora_" not in n),
                "device": str(device),
                "dtype": job["dtype"],
            }
        )
    )


if __name__ == "__main__":
    main()
