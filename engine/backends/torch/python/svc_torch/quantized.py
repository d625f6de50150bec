"""
A quantised GGUF base kept quantised in memory: each projection's weight stays as the file's raw
Q8_0, Q4_K or Q6_K blocks (a uint8 tensor), and QuantizedLinear dequantises it when the forward
or the backward pass reaches the layer. Embedding tables stay blocks too (QuantizedEmbedding): a
lookup dequantises only the rows it reads, and an output head (its own or tied to the embedding)
is read a slice of vocabulary rows at a time by the loss (chunked_loss.py). The autograd function saves nothing but the layer, so no
full-precision copy of a weight lives between the passes (under activation checkpointing, one
decoder layer's while its backward runs); the base is frozen, so only the input's
gradient is computed (grad @ W, with W dequantised again). On the CPU, dequant.c does the work where
the machine has a C compiler (native_dequant.py); the torch dequantisers here are vectorised ports of
gguf-py's numpy ones (ggml-quants.c's reference). Both compute in float32 in gguf-py's order, so
their floats are gguf-py's bit for bit.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F

from . import native_dequant

QK_K = 256


def _f16(column: torch.Tensor) -> torch.Tensor:
    """Two bytes per row (little-endian float16) as float32 [rows, 1]."""
    return column.contiguous().view(torch.float16).to(torch.float32)


def _float32(n: int, per_block: int, like: torch.Tensor, out: Optional[torch.Tensor]) -> torch.Tensor:
    """`out`'s first n * per_block floats, or a new tensor of them."""
    if out is None:
        return torch.empty(n * per_block, dtype=torch.float32, device=like.device)
    return out[: n * per_block]


def dequantize_q8_0(blocks: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """[n, 34] bytes -> [n, 32] float32: d (f16) times 32 int8 values."""
    d = _f16(blocks[:, :2])
    result = _float32(blocks.shape[0], 32, blocks, out).view(-1, 32)
    result.copy_(blocks[:, 2:].contiguous().view(torch.int8))
    return result.mul_(d)


def _q4_k_scale_min(scales: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """The 8 six-bit scales and mins of a Q4_K/Q5_K super-block packed in 12 bytes."""
    s = scales.reshape(-1, 3, 4)
    d, m, m_d = s[:, 0], s[:, 1], s[:, 2]
    sc = torch.cat([d & 0x3F, (m_d & 0x0F) | ((d >> 2) & 0x30)], dim=-1)
    mn = torch.cat([m & 0x3F, (m_d >> 4) | ((m >> 2) & 0x30)], dim=-1)
    return sc, mn


_SHIFTS: Dict[Tuple[Tuple[int, ...], torch.device], torch.Tensor] = {}


def _shifts(values: Tuple[int, ...], device: torch.device) -> torch.Tensor:
    """The bit shifts that spread packed values over a new axis, made once per device."""
    key = (values, device)
    found = _SHIFTS.get(key)
    if found is None:
        found = _SHIFTS[key] = torch.tensor(values, dtype=torch.uint8, device=device)
    return found


def dequantize_q4_k(blocks: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """[n, 144] bytes -> [n, 256] float32: d, dmin (f16), 12 bytes of scales/mins, 128 bytes of nibbles."""
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    sc, mn = _q4_k_scale_min(blocks[:, 4:16])
    # Sub-block 2j holds byte j's low nibbles, 2j + 1 its high ones.
    scale = (d * sc.to(torch.float32)).reshape(n, 4, 2, 1)
    offset = (dmin * mn.to(torch.float32)).reshape(n, 4, 2, 1)
    nibbles = blocks[:, 16:].reshape(n, 4, 32)
    # One float32 tensor written once and scaled in place: the weight's size in memory traffic per
    # pass, where out-of-place steps would each write a new one (the layer is dequantised every pass).
    result = _float32(n, QK_K, blocks, out).view(n, 4, 2, 32)
    result[:, :, 0] = nibbles & 0x0F
    result[:, :, 1] = nibbles >> 4
    return result.mul_(scale).sub_(offset).view(n, QK_K)


def dequantize_q6_k(blocks: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """[n, 210] bytes -> [n, 256] float32: 128 bytes of low nibbles, 64 of high bit pairs, 16 int8 scales, d (f16)."""
    n = blocks.shape[0]
    ql, qh = blocks[:, :128], blocks[:, 128:192]
    scales = blocks[:, 192:208].contiguous().view(torch.int8).to(torch.float32)
    d = (_f16(blocks[:, 208:210]) * scales).reshape(n, 16, 1)
    low = ql.reshape(n, 2, 1, 64) >> _shifts((0, 4), blocks.device).reshape(1, 1, 2, 1)
    low = (low & 0x0F).reshape(n, 8, 32)
    high = qh.reshape(n, 2, 1, 32) >> _shifts((0, 2, 4, 6), blocks.device).reshape(1, 1, 4, 1)
    high = (high & 0x03).reshape(n, 8, 32)
    # In place in one float32 tensor, as dequantize_q4_k; q - 32 is exact in float32.
    result = _float32(n, QK_K, blocks, out).view(n, 16, 16)
    result.copy_((low | (high << 4)).reshape(n, 16, 16))
    return result.sub_(32).mul_(d).view(n, QK_K)


# ggml type id -> (block bytes, elements per block, dequantiser); the ids are GGMLQuantizationType's.
QUANT_TYPES: Dict[int, Tuple[int, int, Callable[..., torch.Tensor]]] = {
    8: (34, 32, dequantize_q8_0),  # Q8_0
    12: (144, QK_K, dequantize_q4_k),  # Q4_K
    14: (210, QK_K, dequantize_q6_k),  # Q6_K
}


def dequantize(blocks: torch.Tensor, ggml_type: int, shape: Tuple[int, int], out: Optional[torch.Tensor] = None) -> torch.Tensor:
    """A GGUF tensor's raw bytes (any shape, uint8) as float32 `shape` ([rows, row length]), written
    into the start of the flat float32 `out` when given."""
    size, _, fn = QUANT_TYPES[ggml_type]
    return fn(blocks.reshape(-1, size), out).view(shape)


class _Scratch:
    """One float32 buffer, grown to the largest weight, that a layer dequantises into before casting
    to its compute dtype: a new tensor the size of a weight would be fresh pages from the OS on
    every pass (allocations that large bypass malloc's free lists), and faulting them in costs about
    as much as the dequantisation itself. Single-threaded use: the cast copies out of it at once."""

    buffer: Optional[torch.Tensor] = None

    @classmethod
    def get(cls, elements: int, device: torch.device) -> torch.Tensor:
        buffer = cls.buffer
        if buffer is None or buffer.numel() < elements or buffer.device != device:
            cls.buffer = buffer = torch.empty(elements, dtype=torch.float32, device=device)
        return buffer


class _WeightBuffers:
    """Memory for dequantised weights, handed back once a matmul is done with it and reused: like
    _Scratch's, a fresh tensor the size of a weight would be new pages from the OS each time. A buffer
    is handed back only where nothing else can hold it (see _QuantizedMatmul); the rest are freed as
    usual, so the pool holds at most what one decoder layer had in use at once."""

    free: Dict[Tuple[int, torch.dtype, torch.device], List[torch.Tensor]] = {}

    @classmethod
    def take(cls, elements: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        found = cls.free.get((elements, dtype, device))
        return found.pop() if found else torch.empty(elements, dtype=dtype, device=device)

    @classmethod
    def give_back(cls, weight: torch.Tensor) -> None:
        free = cls.free.setdefault((weight.numel(), weight.dtype, weight.device), [])
        if not any(buffer.data_ptr() == weight.data_ptr() for buffer in free):  # never listed twice
            free.append(weight)


def release_weight(weight: torch.Tensor) -> None:
    """Hands back a weight dequantised with `pooled=True` that nothing will read again."""
    _WeightBuffers.give_back(weight)


def _in_backward_pass() -> Optional[bool]:
    """Whether autograd's engine is running this code (a checkpointed layer's recomputed forward runs
    there); None where this torch cannot tell."""
    task = getattr(torch._C, "_current_graph_task_id", None)
    return None if task is None else task() != -1


def native_dequantizer_status() -> str:
    """What dequantises kept-quantised weights on the CPU, in words."""
    return native_dequant.load()[1]


class _QuantizedMatmul(torch.autograd.Function):
    """x @ W.T with W dequantised from `layer`'s blocks here and again in backward; saves no tensor,
    unless the layer runs under activation checkpointing (`save_weight_for_backward`)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, layer: "QuantizedLinear") -> torch.Tensor:
        ctx.layer = layer
        w = layer.dequantized(x.dtype, pooled=True)
        # Under non-reentrant checkpointing, what the first forward saves is dropped at once and the
        # backward pass recomputes it right before it is used: saving W then holds one decoder layer's
        # weights for the length of that layer's backward, and spares a third dequantisation per step.
        ctx.saved_weight = layer.save_weight_for_backward and x.requires_grad
        if ctx.saved_weight:
            ctx.save_for_backward(w)
        y = F.linear(x, w)
        # W is the matmul's alone unless it was saved for a backward pass: outside the engine, that
        # save is checkpointing's first forward, which keeps nothing; inside, it is the recomputation.
        if not ctx.saved_weight or _in_backward_pass() is False:
            _WeightBuffers.give_back(w)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        if not ctx.needs_input_grad[0]:
            return None, None
        w = ctx.saved_tensors[0] if ctx.saved_weight else ctx.layer.dequantized(grad.dtype, pooled=True)
        result = grad @ w.to(grad.dtype)
        # The graph is used once (no retain_graph): W is not read again after this.
        _WeightBuffers.give_back(w)
        return result, None


class QuantizedLinear(torch.nn.Linear):
    """An nn.Linear (so PEFT wraps it like any projection) whose weight is GGUF blocks, dequantised on use.
    The blocks are the buffer `qweight`, and `weight` reads them too (uint8 [out, row bytes]): PEFT takes
    the adapter's device from it and, the bytes being integers, leaves the adapter's float32 alone; nothing
    that reads `.weight` dequantises a layer by accident. No `compute_dtype` either, which PEFT would cast
    the adapter to: the layer computes in its input's dtype."""

    def __init__(self, in_features: int, out_features: int, ggml_type: int, blocks: torch.Tensor, bias: Optional[torch.nn.Parameter] = None):
        torch.nn.Module.__init__(self)
        if ggml_type not in QUANT_TYPES:
            raise ValueError(f"ggml type {ggml_type} is not kept quantised")
        self.in_features, self.out_features = in_features, out_features
        self.ggml_type = ggml_type
        self.register_buffer("qweight", blocks, persistent=False)
        self.bias = bias
        # Set while the model checkpoints activations (training.py): see _QuantizedMatmul.
        self.save_weight_for_backward = False

    @property
    def weight(self) -> torch.Tensor:
        return self.qweight

    @property
    def rows(self) -> int:
        return self.out_features

    def dequantized(self, dtype: torch.dtype, pooled: bool = False) -> torch.Tensor:
        """The whole weight; `pooled`: in a _WeightBuffers buffer, which the caller hands back."""
        return self.dequantized_rows(0, self.out_features, dtype, pooled)

    def dequantized_rows(self, start: int, stop: int, dtype: torch.dtype, pooled: bool = False) -> torch.Tensor:
        """Rows start..stop of the weight (a slice of the vocabulary, for an output head)."""
        shape = (min(stop, self.out_features) - start, self.in_features)
        elements, blocks, device = shape[0] * shape[1], self.qweight[start:stop], self.qweight.device
        out = _WeightBuffers.take(elements, dtype, device) if pooled else torch.empty(elements, dtype=dtype, device=device)
        # The native kernel is CPU code: on a GPU it is not even built.
        native = native_dequant.load()[0] if device.type == "cpu" else None
        if native is not None and native.supports(self.ggml_type, blocks, dtype):
            size, per_block, _ = QUANT_TYPES[self.ggml_type]
            return native.dequantize(self.ggml_type, blocks, size, per_block, out).view(shape)
        if dtype == torch.float32:
            return dequantize(blocks, self.ggml_type, shape, out=out)
        scratch = _Scratch.get(elements, device)
        return out.view(shape).copy_(dequantize(blocks, self.ggml_type, shape, out=scratch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _QuantizedMatmul.apply(x, self)
        return y if self.bias is None else y + self.bias.to(y.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, ggml_type={self.ggml_type}"


class QuantizedEmbedding(torch.nn.Module):
    """An embedding table (nn.Embedding, or Gemma's scaled one) whose rows are GGUF blocks: a lookup
    dequantises the rows it reads and nothing else. The table is frozen, so its output needs no graph.
    `weight` reads the blocks, as QuantizedLinear's does."""

    def __init__(
        self, num_embeddings: int, embedding_dim: int, ggml_type: int, blocks: torch.Tensor, dtype: torch.dtype, embed_scale: Optional[torch.Tensor] = None
    ):
        super().__init__()
        if ggml_type not in QUANT_TYPES:
            raise ValueError(f"ggml type {ggml_type} is not kept quantised")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.ggml_type, self.dtype = ggml_type, dtype
        self.register_buffer("qweight", blocks, persistent=False)
        self.register_buffer("embed_scale", embed_scale, persistent=False)

    @property
    def weight(self) -> torch.Tensor:
        return self.qweight

    @property
    def rows(self) -> int:
        return self.num_embeddings

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        flat = ids.reshape(-1)
        values = dequantize(self.qweight.index_select(0, flat), self.ggml_type, (flat.shape[0], self.embedding_dim)).to(self.dtype)
        if self.embed_scale is not None:  # as Gemma's scaled embedding: the product in the table's dtype
            values = values * self.embed_scale.to(self.dtype)
        return values.reshape(*ids.shape, self.embedding_dim)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, ggml_type={self.ggml_type}"
