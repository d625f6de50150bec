"""
The bench's anchor: a plain PyTorch LoRA training loop of a llama-shaped model, written the way
one would write it by hand (nn.Module, nn.Linear, torch.optim.AdamW), with nothing of svc in it.
The torch backend's tokens/s is reported against this loop's on the same shapes, threads and
device, so the ratio shows what svc's process, protocol and model code cost.

Reads one JSON object on stdin:
  {config (ModelConfig), shapes: [[batch, length, tokens], ...], steps, warmup,
   lora: {r, alpha, targets}, device?}
and prints one JSON line: {tokensPerSecond, stepSeconds, peakRssBytes, peakDeviceBytes, device, dtype}.
Weights are random (throughput does not depend on their values).
"""
import contextlib
import json
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LoraLinear(nn.Module):
    def __init__(self, n_in, n_out, bias, r, alpha, adapted):
        super().__init__()
        self.base = nn.Linear(n_in, n_out, bias=bias)
        self.base.requires_grad_(False)
        self.adapted = adapted
        if adapted:
            self.a = nn.Parameter(torch.empty(r, n_in).uniform_(-1 / math.sqrt(n_in), 1 / math.sqrt(n_in)))
            self.b = nn.Parameter(torch.zeros(n_out, r))
            self.scaling = alpha / r

    def forward(self, x):
        y = self.base(x)
        if self.adapted:
            y = y + F.linear(F.linear(x, self.a), self.b) * self.scaling
        return y


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim), requires_grad=False)
        self.eps = eps

    def forward(self, x):
        x = x.float()
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class Block(nn.Module):
    def __init__(self, c, lora):
        super().__init__()
        d, hd = c["embeddingLength"], c["headDim"]
        self.heads, self.kv_heads, self.hd = c["headCount"], c["headCountKv"], hd
        L = lambda name, i, o, bias=False: LoraLinear(i, o, bias, lora["r"], lora["alpha"], name in lora["targets"])
        bias = bool(c.get("attentionBias"))
        self.q = L("attn_q", d, self.heads * hd, bias)
        self.k = L("attn_k", d, self.kv_heads * hd, bias)
        self.v = L("attn_v", d, self.kv_heads * hd, bias)
        self.o = L("attn_output", self.heads * hd, d)
        self.gate = L("ffn_gate", d, c["feedForwardLength"])
        self.up = L("ffn_up", d, c["feedForwardLength"])
        self.down = L("ffn_down", c["feedForwardLength"], d)
        self.n1 = RMSNorm(d, c["rmsNormEpsilon"])
        self.n2 = RMSNorm(d, c["rmsNormEpsilon"])

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        h = self.n1(x)
        q = self.q(h).view(B, T, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        group = self.heads // self.kv_heads
        k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q.to(v.dtype), k.to(v.dtype), v, is_causal=True)
        else:
            s = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
            a = s.softmax(-1).to(v.dtype) @ v
        x = x + self.o(a.transpose(1, 2).reshape(B, T, -1))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, c, lora):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c["vocabSize"], c["embeddingLength"])
        self.embed.requires_grad_(False)
        self.blocks = nn.ModuleList(Block(c, lora) for _ in range(c["blockCount"]))
        self.norm = RMSNorm(c["embeddingLength"], c["rmsNormEpsilon"])
        self.out = nn.Linear(c["embeddingLength"], c["vocabSize"], bias=False)
        self.out.requires_grad_(False)

    def forward(self, ids):
        T = ids.shape[1]
        hd = self.c["headDim"]
        inv = 1.0 / (self.c["ropeFreqBase"] ** (torch.arange(0, hd, 2, device=ids.device).float() / hd))
        ang = torch.outer(torch.arange(T, device=ids.device).float(), inv)
        cos, sin = torch.cat([ang.cos()] * 2, -1), torch.cat([ang.sin()] * 2, -1)
        x = self.embed(ids).float()
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.out(self.norm(x))


def main():
    job = json.load(sys.stdin)
    torch.set_num_threads(int(os.environ.get("SVC_TORCH_THREADS") or 0) or os.cpu_count())
    device = torch.device(job.get("device") or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16) if device.type == "cuda" else torch.float32
    c = job["config"]
    torch.manual_seed(0)
    model = Model(c, job["lora"]).to(device)
    if device.type == "cuda":  # frozen weights in the compute dtype, as the backend stores them
        for m in model.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)) and not any(p.requires_grad for p in m.parameters()):
                m.to(dtype)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0)
    shapes = job["shapes"]
    warmup, steps = job["warmup"], job["steps"]
    tokens = 0
    started = None
    for i in range(warmup + steps):
        if i == warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            started = time.perf_counter()
        B, T, n = shapes[i % len(shapes)]
        ids = torch.randint(0, c["vocabSize"], (B, T + 1), device=device)
        with torch.autocast(device.type, dtype=dtype) if device.type == "cuda" else contextlib.nullcontext():
            logits = model(ids[:, :-1])
        loss = F.cross_entropy(logits.float().reshape(-1, c["vocabSize"]), ids[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        float(loss)  # the backend reads its loss back every step too
        if i >= warmup:
            tokens += n
    seconds = time.perf_counter() - started
    print(json.dumps({
        "tokensPerSecond": tokens / seconds,
        "stepSeconds": seconds / steps,
        "peakRssBytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "peakDeviceBytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0,
        "device": str(device),
        "dtype": str(dtype).replace("torch.", ""),
    }))


if __name__ == "__main__":
    main()
