"""
The llama family's forward pass and masked loss in PyTorch, written from llama.cpp's graphs
(src/models/llama.cpp, qwen2.cpp, qwen3.cpp) and matching engine/model/forward.ts:
  x = embed(ids); per block: x += Wo·attn(rope(norm_q(Wq·n + bq)), rope(norm_k(Wk·n + bk)), Wv·n + bv)
  with n = rmsnorm(x); x += Wdown·(silu(Wgate·n) ⊙ Wup·n) with n = rmsnorm(x);
  logits = Wout·rmsnorm(x) (Wout = token_embd when the output is tied).
The differences between architectures are ModelConfig fields (engine/model/config.ts), sent as JSON.
The base weights are frozen (requires_grad False): autograd keeps no gradient buffers for them.
"""
from __future__ import annotations

import math
from typing import Callable, Dict, Optional

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.checkpoint

from .chunked_loss import chunked_masked_loss_sum
from .lora import Lora, merged_lora_linear


def weight_names(cfg: dict) -> Dict[str, tuple]:
    """Every tensor the model reads, with its expected numpy/torch shape (ggml dims reversed)."""
    d, ff, hd = cfg["embeddingLength"], cfg["feedForwardLength"], cfg["headDim"]
    q, kv = cfg["headCount"] * hd, cfg["headCountKv"] * hd
    names: Dict[str, tuple] = {"token_embd.weight": (cfg["vocabSize"], d)}
    if cfg.get("ropeFreqFactors"):
        names["rope_freqs.weight"] = (hd // 2,)
    linears = {"attn_q": (q, d), "attn_k": (kv, d), "attn_v": (kv, d), "attn_output": (d, q), "ffn_gate": (ff, d), "ffn_up": (ff, d), "ffn_down": (d, ff)}
    for b in range(cfg["blockCount"]):
        names[f"blk.{b}.attn_norm.weight"] = (d,)
        names[f"blk.{b}.ffn_norm.weight"] = (d,)
        for proj, shape in linears.items():
            names[f"blk.{b}.{proj}.weight"] = shape
        if cfg.get("attentionBias"):
            for proj in ("attn_q", "attn_k", "attn_v"):
                names[f"blk.{b}.{proj}.bias"] = (linears[proj][0],)
        if cfg.get("qkNorm"):
            names[f"blk.{b}.attn_q_norm.weight"] = (hd,)
            names[f"blk.{b}.attn_k_norm.weight"] = (hd,)
    names["output_norm.weight"] = (d,)
    if not cfg.get("tiedOutput"):
        names["output.weight"] = (cfg["vocabSize"], d)
    return names


def is_matrix_weight(name: str) -> bool:
    """Large weights that may be stored in the compute dtype; norms, biases and factors stay float32."""
    return name.endswith(".weight") and "norm" not in name and name != "rope_freqs.weight"


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.float()
    return x * torch.rsqrt(x.square().mean(-1, keepdim=True) + eps) * weight


class Model:
    LOGITS_CHUNK_BYTES = 256 << 20

    def __init__(self, cfg: dict, weights: Dict[str, torch.Tensor], device: torch.device, compute_dtype: torch.dtype):
        self.cfg = cfg
        self.w = weights
        self.device = device
        self.compute_dtype = compute_dtype
        self.eps = float(cfg["rmsNormEpsilon"])
        self.head_dim = int(cfg["headDim"])
        self.checkpoint_blocks = False
        self._rope_cache: Dict[int, tuple] = {}
        self._causal_cache: Dict[int, torch.Tensor] = {}
        self._has_sdpa = hasattr(F, "scaled_dot_product_attention")

    # RoPE as ggml_rope_ext: pair i turns by pos · freqScale · base^(-2i/headDim) / factor_i.
    # Angles in float64 then float32, as the tfjs reference builds its tables. The tables are
    # head-wide, in the style's pair layout: cos at both members of a pair, and sin signed so
    # that rotation is h · cos + partner(h) · sin (partner swaps the members of each pair).
    def rope_tables(self, length: int):
        cached = self._rope_cache.get(length)
        if cached is not None:
            return cached
        cfg, dim = self.cfg, self.head_dim
        i = np.arange(dim // 2, dtype=np.float64)
        inv = np.power(float(cfg["ropeFreqBase"]), -2.0 * i / dim)
        if cfg.get("ropeFreqFactors"):
            inv = inv / self.w["rope_freqs.weight"].double().cpu().numpy()
        pos = np.arange(length, dtype=np.float64) * float(cfg.get("ropeFreqScale", 1.0))
        theta = pos[:, None] * inv[None, :]
        cos = torch.tensor(np.cos(theta), dtype=torch.float32, device=self.device)
        sin = torch.tensor(np.sin(theta), dtype=torch.float32, device=self.device)
        if cfg["ropeStyle"] == "neox":  # pairs (i, i + hd/2)
            tables = (torch.cat([cos, cos], -1), torch.cat([-sin, sin], -1))
        else:  # pairs (2i, 2i + 1)
            tables = (cos.repeat_interleave(2, -1), torch.stack([-sin, sin], -1).reshape(length, dim))
        self._rope_cache[length] = tables
        return tables

    def causal_mask(self, length: int) -> torch.Tensor:
        """Added to the attention scores: 0 where a position may attend, -inf above the diagonal. Made once per length."""
        mask = self._causal_cache.get(length)
        if mask is None:
            above = torch.ones(length, length, dtype=torch.bool, device=self.device).triu(1)
            mask = torch.zeros(length, length, device=self.device).masked_fill(above, float("-inf"))
            self._causal_cache[length] = mask
        return mask

    def rope(self, h: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        """h [B, H, T, hd] float32; 'normal' rotates (2i, 2i+1), 'neox' rotates (i, i + hd/2).
        Four operations where per-member arithmetic took eight (and a stack): a × cos − b × sin is
        computed as a × cos + b × (−sin), the same floats."""
        if self.cfg["ropeStyle"] == "neox":
            half = self.head_dim // 2
            partner = torch.cat([h[..., half:], h[..., :half]], dim=-1)
        else:
            partner = h.reshape(*h.shape[:-1], self.head_dim // 2, 2).flip(-1).reshape(h.shape)
        return h * cos + partner * sin

    def linear(self, x: torch.Tensor, block: int, proj: str, lora: Optional[Lora]) -> torch.Tensor:
        weight, bias = self.w[f"blk.{block}.{proj}.weight"], self.w.get(f"blk.{block}.{proj}.bias")
        pair = lora.pair(block, proj) if lora is not None else None
        if pair is None:
            return F.linear(x, weight, bias)
        a, b = pair
        if weight.dtype == torch.float32 and torch.is_grad_enabled():
            y = merged_lora_linear(x, weight, a, b, lora.scaling)
            return y if bias is None else y + bias
        return F.linear(x, weight, bias) + F.linear(F.linear(x, a), b) * lora.scaling

    def attention(self, x: torch.Tensor, block: int, lora: Optional[Lora]) -> torch.Tensor:
        cfg, hd = self.cfg, self.head_dim
        batch, length, _ = x.shape
        heads, kv_heads = cfg["headCount"], cfg["headCountKv"]
        cos, sin = self.rope_tables(length)

        def split(t: torch.Tensor, n: int) -> torch.Tensor:
            return t.reshape(batch, length, n, hd).transpose(1, 2)

        q = split(self.linear(x, block, "attn_q", lora), heads).float()
        k = split(self.linear(x, block, "attn_k", lora), kv_heads).float()
        v = split(self.linear(x, block, "attn_v", lora), kv_heads)
        if cfg.get("qkNorm"):
            q = rms_norm(q, self.w[f"blk.{block}.attn_q_norm.weight"], self.eps)
            k = rms_norm(k, self.w[f"blk.{block}.attn_k_norm.weight"], self.eps)
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        group = heads // kv_heads
        if group > 1:  # query head h reads key/value head h // group, as ggml broadcasts
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
        if self._has_sdpa:
            dtype = v.dtype if self.device.type != "cpu" else torch.float32
            context = F.scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype), is_causal=True)
        else:
            # torch < 2 (Debian's 1.13) has no fused attention: scale and mask go into the
            # product itself (baddbmm), which saves a pass over the scores and its backward.
            flat = lambda t: t.reshape(batch * heads, length, hd)
            scores = torch.baddbmm(self.causal_mask(length), flat(q), flat(k).transpose(1, 2), alpha=1.0 / math.sqrt(hd))
            context = torch.bmm(torch.softmax(scores, dim=-1).to(v.dtype), flat(v)).view(batch, heads, length, hd)
        merged = context.transpose(1, 2).reshape(batch, length, heads * hd)
        return self.linear(merged, block, "attn_output", lora)

    def block(self, x: torch.Tensor, block: int, lora: Optional[Lora]) -> torch.Tensor:
        x = x + self.attention(rms_norm(x, self.w[f"blk.{block}.attn_norm.weight"], self.eps), block, lora).float()
        n = rms_norm(x, self.w[f"blk.{block}.ffn_norm.weight"], self.eps)
        gate = self.linear(n, block, "ffn_gate", lora)
        up = self.linear(n, block, "ffn_up", lora)
        return x + self.linear(F.silu(gate) * up, block, "ffn_down", lora).float()

    def hidden(self, ids: torch.Tensor, lora: Optional[Lora]) -> torch.Tensor:
        if ids.shape[1] > self.cfg["contextLength"]:
            raise ValueError(f"sequence of {ids.shape[1]} tokens exceeds the context of {self.cfg['contextLength']}")
        x = F.embedding(ids.long(), self.w["token_embd.weight"]).float()
        for b in range(self.cfg["blockCount"]):
            if self.checkpoint_blocks and torch.is_grad_enabled():
                # Recompute each block in the backward pass instead of keeping its activations.
                x = torch.utils.checkpoint.checkpoint(self.block, x, b, lora, use_reentrant=False)
            else:
                x = self.block(x, b, lora)
        return rms_norm(x, self.w["output_norm.weight"], self.eps)

    def output_weight(self) -> torch.Tensor:
        return self.w["token_embd.weight"] if self.cfg.get("tiedOutput") else self.w["output.weight"]

    def _chunk_loss(self, final: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = F.linear(final, self.output_weight()).float()
        return (F.cross_entropy(logits, targets, reduction="none") * mask).sum()

    def loss_sum(self, inputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, lora: Optional[Lora]) -> torch.Tensor:
        """Summed masked next-token cross-entropy (float32)."""
        final = self.hidden(inputs, lora)
        final = final.reshape(-1, final.shape[-1])
        targets, mask = targets.reshape(-1).long(), mask.reshape(-1)
        # The logits of a large vocabulary dominate memory (Qwen: 152k floats a token, kept for
        # the backward pass with their softmax). Above LOGITS_CHUNK_BYTES, go a slice of tokens at
        # a time, computing each slice's hidden-state gradient in the forward pass (chunked_loss.py).
        rows = max(1, self.LOGITS_CHUNK_BYTES // (4 * self.cfg["vocabSize"]))
        if final.shape[0] <= rows:
            return self._chunk_loss(final, targets, mask)
        if not (torch.is_grad_enabled() and final.requires_grad):
            with torch.no_grad():
                return sum(self._chunk_loss(final[i : i + rows], targets[i : i + rows], mask[i : i + rows]) for i in range(0, final.shape[0], rows))
        return chunked_masked_loss_sum(final, self.output_weight(), targets, mask, rows)

    def autocast(self):
        """Autocast to the compute dtype (bf16/fp16 on GPUs); a no-op context for float32."""
        if self.compute_dtype == torch.float32:
            return torch.autocast("cpu", enabled=False)
        return torch.autocast(self.device.type, dtype=self.compute_dtype)


def build_model(cfg: dict, read: Callable[[str], np.ndarray], device: torch.device, compute_dtype: torch.dtype,
                on_tensor: Callable[[str, int], None]) -> Model:
    """Reads each weight through `read` (one tensor in memory at a time) and checks its shape."""
    weights: Dict[str, torch.Tensor] = {}
    for name, shape in weight_names(cfg).items():
        array = read(name)
        if tuple(array.shape) != tuple(shape):
            raise ValueError(f"tensor {name} has shape {list(array.shape)}, expected {list(shape)} for this config")
        dtype = compute_dtype if is_matrix_weight(name) else torch.float32
        t = torch.from_numpy(array).to(device=device, dtype=dtype)
        weights[name] = t.requires_grad_(False)
        on_tensor(name, array.nbytes)
        del array
    return Model(cfg, weights, device, compute_dtype)
