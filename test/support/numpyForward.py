"""Textbook numpy forward pass of an F32 llama / qwen2 / qwen3 GGUF (read with llama.cpp's gguf-py),
an independent check that the test models mean what llama.cpp computes.
Usage: python3 numpyForward.py MODEL.gguf TOKEN,TOKEN,... OUT.f32  (writes the last position's logits)."""

import struct
import sys

import numpy as np
from gguf import GGUFReader, GGUFValueType


class ModelReader(GGUFReader):
    """gguf-py's reader stepping over long arrays (the tokenizer's tokens, scores, merges) instead
    of making numpy views per entry, which takes most of the run on a real vocabulary; this pass
    reads only the model's metadata and tensors."""

    def _get_field_parts(self, orig_offs, raw_type):
        count = int(self._get(orig_offs + 4, np.uint64)[0]) if GGUFValueType(raw_type) == GGUFValueType.ARRAY else 0
        if count <= 1024:
            return super()._get_field_parts(orig_offs, raw_type)
        item_type = self._get(orig_offs, np.uint32)
        kind, offs = GGUFValueType(int(item_type[0])), orig_offs + 12
        if kind == GGUFValueType.STRING:
            for _ in range(count):
                offs += 8 + struct.unpack_from("<Q", self.data, offs)[0]
        else:
            offs += count * np.dtype(self.gguf_scalar_to_np[kind]).itemsize
        return offs - orig_offs, [item_type], [], [GGUFValueType.ARRAY, kind]


path, ids, out = sys.argv[1], [int(t) for t in sys.argv[2].split(",")], sys.argv[3]
r = ModelReader(path)
meta = {f.name: f.contents() for f in r.fields.values() if not f.name.startswith("tokenizer.")}
arch = meta["general.architecture"]
W = {t.name: np.asarray(t.data, dtype=np.float64).reshape([int(d) for d in reversed(t.shape)]) for t in r.tensors}
H, Hkv, hd = meta[f"{arch}.attention.head_count"], meta[f"{arch}.attention.head_count_kv"], meta[f"{arch}.attention.key_length"]
eps, base = meta[f"{arch}.attention.layer_norm_rms_epsilon"], meta[f"{arch}.rope.freq_base"]
neox = arch in ("qwen2", "qwen3")


def rms(x, w):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rope(x):  # x: (T, heads, hd)
    T = x.shape[0]
    inv = base ** (-np.arange(0, hd, 2) / hd)
    if "rope_freqs.weight" in W:
        inv = inv / W["rope_freqs.weight"]
    ang = np.arange(T)[:, None] * inv[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    if neox:
        a, b = x[..., : hd // 2], x[..., hd // 2 :]
        return np.concatenate([a * cos - b * sin, a * sin + b * cos], -1)
    a, b = x[..., 0::2], x[..., 1::2]
    y = np.empty_like(x)
    y[..., 0::2], y[..., 1::2] = a * cos - b * sin, a * sin + b * cos
    return y


T = len(ids)
x = W["token_embd.weight"][ids]
for blk in range(meta[f"{arch}.block_count"]):
    p = f"blk.{blk}."
    h = rms(x, W[p + "attn_norm.weight"])
    q, k, v = (h @ W[p + f"attn_{n}.weight"].T + W.get(p + f"attn_{n}.bias", 0) for n in "qkv")
    q, k, v = q.reshape(T, H, hd), k.reshape(T, Hkv, hd), v.reshape(T, Hkv, hd)
    if p + "attn_q_norm.weight" in W:
        q, k = rms(q, W[p + "attn_q_norm.weight"]), rms(k, W[p + "attn_k_norm.weight"])
    q, k = rope(q), rope(k)
    k, v = np.repeat(k, H // Hkv, axis=1), np.repeat(v, H // Hkv, axis=1)
    s = np.einsum("thd,uhd->htu", q, k) / np.sqrt(hd) + np.triu(np.full((T, T), -np.inf), 1)
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    x = x + np.einsum("htu,uhd->thd", s, v).reshape(T, H * hd) @ W[p + "attn_output.weight"].T
    h = rms(x, W[p + "ffn_norm.weight"])
    g = h @ W[p + "ffn_gate.weight"].T
    x = x + ((g / (1 + np.exp(-g))) * (h @ W[p + "ffn_up.weight"].T)) @ W[p + "ffn_down.weight"].T
out_w = W.get("output.weight", W["token_embd.weight"])
(rms(x[-1], W["output_norm.weight"]) @ out_w.T).astype(np.float32).tofile(out)
