"""
Reads GGUF v3 files without gguf-py: the header is parsed with struct, tensor data is a numpy
memmap of the file, and each tensor is dequantised to float32 on its own, so a model is never
held twice in memory (the memmap pages are the page cache's, not ours).

Block layouts follow ggml/src/ggml-quants.c (dequantize_row_*); each dequantiser below works on
a [blocks, bytes_per_block] uint8 array and returns [blocks, values_per_block] float32.
"""
from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

import numpy as np

GGUF_MAGIC = 0x46554747
QK_K = 256

# ggml type id -> (name, values per block, bytes per block)
GGML_TYPES: Dict[int, Tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    30: ("BF16", 1, 2),
}


@dataclass
class TensorInfo:
    name: str
    dims: List[int]  # ggml order: ne0 (row length) first
    type_id: int
    offset: int  # absolute byte offset in the file

    @property
    def type_name(self) -> str:
        return GGML_TYPES.get(self.type_id, (f"type {self.type_id}", 0, 0))[0]

    @property
    def count(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    @property
    def shape(self) -> Tuple[int, ...]:
        """numpy/torch shape: ggml's dims reversed (rows are the slowest dimension)."""
        return tuple(reversed(self.dims))

    @property
    def nbytes(self) -> int:
        _, block, size = GGML_TYPES.get(self.type_id, ("", 1, 0))
        return self.count // block * size


class _Cursor:
    def __init__(self, data: np.ndarray):
        self.data = data
        self.pos = 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return values[0] if len(values) == 1 else values

    def string(self) -> str:
        length = self.take("<Q")
        raw = bytes(self.data[self.pos : self.pos + length])
        self.pos += length
        return raw.decode("utf-8", errors="replace")


_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def _value(cur: _Cursor, vtype: int):
    if vtype == 8:
        return cur.string()
    if vtype == 9:
        item_type = cur.take("<I")
        n = cur.take("<Q")
        if item_type in _SCALARS and item_type != 8:
            # Skip big numeric arrays (token scores, types) in one step: the server never needs them.
            size = struct.calcsize(_SCALARS[item_type])
            cur.pos += n * size
            return None
        return [_value(cur, item_type) for _ in range(n)]
    if vtype not in _SCALARS:
        raise ValueError(f"unknown GGUF metadata value type {vtype}")
    return cur.take(_SCALARS[vtype])


class GgufFile:
    """A GGUF file's metadata and tensor directory, with its data reachable through a memmap."""

    def __init__(self, path: str):
        self.path = path
        self.data = np.memmap(path, dtype=np.uint8, mode="r")
        cur = _Cursor(self.data)
        if len(self.data) < 24 or cur.take("<I") != GGUF_MAGIC:
            raise ValueError(f"{path} is not a GGUF file (bad magic)")
        version = cur.take("<I")
        if version not in (2, 3):
            raise ValueError(f"{path}: GGUF version {version} is not supported (2 or 3 expected)")
        n_tensors = cur.take("<Q")
        n_kv = cur.take("<Q")
        self.metadata: Dict[str, object] = {}
        for _ in range(n_kv):
            key = cur.string()
            self.metadata[key] = _value(cur, cur.take("<I"))
        infos = []
        for _ in range(n_tensors):
            name = cur.string()
            n_dims = cur.take("<I")
            dims = [cur.take("<Q") for _ in range(n_dims)]
            type_id = cur.take("<I")
            offset = cur.take("<Q")
            infos.append((name, dims, type_id, offset))
        alignment = int(self.metadata.get("general.alignment") or 32)
        start = (cur.pos + alignment - 1) // alignment * alignment
        self.tensors: Dict[str, TensorInfo] = {
            name: TensorInfo(name, dims, type_id, start + offset) for name, dims, type_id, offset in infos
        }

    def read(self, name: str, max_chunk_values: int = 1 << 24) -> np.ndarray:
        """One tensor dequantised to a new float32 array of its numpy shape."""
        info = self.tensors.get(name)
        if info is None:
            raise KeyError(f"GGUF {self.path} has no tensor {name}")
        if info.type_id not in DEQUANTISERS:
            supported = ", ".join(GGML_TYPES[t][0] for t in DEQUANTISERS)
            raise ValueError(f"tensor {name} has type {info.type_name}, which the torch backend cannot read (supported: {supported})")
        _, block, size = GGML_TYPES[info.type_id]
        if info.count % block:
            raise ValueError(f"tensor {name}: {info.count} values is not a whole number of {info.type_name} blocks")
        end = info.offset + info.nbytes
        if end > len(self.data):
            raise ValueError(f"tensor {name} runs past the end of {self.path} (truncated file?)")
        blocks = self.data[info.offset : end].reshape(-1, size)
        out = np.empty(info.count, dtype=np.float32)
        # Dequantise a slice of blocks at a time: the float32 temporaries stay small on big tensors.
        per_chunk = max(1, max_chunk_values // block)
        dequantise = DEQUANTISERS[info.type_id]
        for first in range(0, blocks.shape[0], per_chunk):
            part = np.asarray(blocks[first : first + per_chunk])
            out[first * block : (first + part.shape[0]) * block] = dequantise(part).reshape(-1)
        self._release(info.offset, end)
        return out.reshape(info.shape)

    def _release(self, start: int, end: int) -> None:
        """Unmaps the pages of a tensor already read, so the file does not sit in this process's
        resident memory next to the float32 copy (the kernel's page cache keeps it, reclaimably)."""
        mapping = getattr(self.data, "_mmap", None)
        advice = getattr(mmap, "MADV_DONTNEED", None)
        if mapping is None or advice is None:
            return
        page = mmap.PAGESIZE
        first = (start + page - 1) // page * page  # whole pages inside this tensor only
        last = end // page * page
        if last > first:
            try:
                mapping.madvise(advice, first, last - first)
            except (OSError, ValueError):
                pass


def _f16(raw: np.ndarray) -> np.ndarray:
    """uint8 [..., 2] columns -> float32 [..., 1]."""
    return np.ascontiguousarray(raw).view(np.float16).astype(np.float32)


def _f32(blocks: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(blocks).view(np.float32)


def _bf16(blocks: np.ndarray) -> np.ndarray:
    # bfloat16 is the top half of a float32: shift the 16 bits into place.
    return (np.ascontiguousarray(blocks).view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _q8_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    q = np.ascontiguousarray(blocks[:, 2:]).view(np.int8).astype(np.float32)
    return q * d


def _q4_0(blocks: np.ndarray) -> np.ndarray:
    # 16 bytes: low nibbles are values 0..15, high nibbles values 16..31; both offset by 8.
    d = _f16(blocks[:, :2])
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    return q * d


def _k_scales(scales: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The 8 six-bit (scale, min) pairs packed in 12 bytes (get_scale_min_k4)."""
    s = scales.astype(np.uint8)
    sc = np.empty((s.shape[0], 8), dtype=np.uint8)
    mn = np.empty((s.shape[0], 8), dtype=np.uint8)
    sc[:, :4] = s[:, 0:4] & 63
    mn[:, :4] = s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 0x0F) | ((s[:, 0:4] >> 6) << 4)
    mn[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc.astype(np.float32), mn.astype(np.float32)


def _q4_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d = _f16(blocks[:, 0:2])
    dmin = _f16(blocks[:, 2:4])
    sc, mn = _k_scales(blocks[:, 4:16])
    qs = blocks[:, 16:144].reshape(n, 4, 32)
    # Each 32-byte group holds two sub-blocks of 32: low nibbles first, then high nibbles.
    q = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(n, 8, 32).astype(np.float32)
    return (d * sc)[:, :, None] * q - (dmin * mn)[:, :, None]


def _q5_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d = _f16(blocks[:, 0:2])
    dmin = _f16(blocks[:, 2:4])
    sc, mn = _k_scales(blocks[:, 4:16])
    qh = blocks[:, 16:48]  # bit j of qh[l] is the fifth bit of value l of sub-block j
    qs = blocks[:, 48:176].reshape(n, 4, 32)
    low = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(n, 8, 32)
    high = (qh[:, None, :] >> np.arange(8, dtype=np.uint8)[None, :, None]) & 1
    q = (low | (high << 4)).astype(np.float32)
    return (d * sc)[:, :, None] * q - (dmin * mn)[:, :, None]


def _q6_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    ql = blocks[:, 0:128].reshape(n, 2, 64)  # per half of 128 values: 64 bytes of low nibbles
    qh = blocks[:, 128:192].reshape(n, 2, 32)  # per half: 32 bytes of 2-bit highs for 4 groups
    scales = np.ascontiguousarray(blocks[:, 192:208]).view(np.int8).astype(np.float32)  # 16 sub-blocks of 16
    d = _f16(blocks[:, 208:210])
    # Within a half, value l + 32·g (g = 0..3) takes: low nibble of ql[l] (g=0), ql[l+32] (g=1),
    # high nibble of ql[l] (g=2), ql[l+32] (g=3); high bits (qh[l] >> 2g) & 3.
    low = np.stack([ql[:, :, :32] & 0x0F, ql[:, :, 32:] & 0x0F, ql[:, :, :32] >> 4, ql[:, :, 32:] >> 4], axis=2)
    high = (qh[:, :, None, :] >> (2 * np.arange(4, dtype=np.uint8))[None, None, :, None]) & 3
    q = (low | (high << 4)).astype(np.float32) - 32.0  # [n, 2, 4, 32]
    q = q.reshape(n, 16, 16)
    return (d * scales)[:, :, None] * q


DEQUANTISERS: Dict[int, Callable[[np.ndarray], np.ndarray]] = {
    0: _f32,
    1: lambda b: np.ascontiguousarray(b).view(np.float16).astype(np.float32),
    30: _bf16,
    8: _q8_0,
    2: _q4_0,
    12: _q4_k,
    13: _q5_k,
    14: _q6_k,
}
