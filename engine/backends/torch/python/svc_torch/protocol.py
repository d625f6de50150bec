"""
Frames on a byte stream (PROTOCOL.md): u32 little-endian header length, a UTF-8 JSON header, then
the binary payloads the header lists in `tensors` ([{name, dtype, shape, bytes}]), back to back.
"""

from __future__ import annotations

import json
import struct
from typing import BinaryIO, Dict, List, Optional, Tuple

import numpy as np

DTYPES = {"f32": np.float32, "i32": np.int32}
MAX_HEADER_BYTES = 64 << 20


class ProtocolError(Exception):
    pass


def _read_exact(stream: BinaryIO, n: int) -> Optional[bytes]:
    chunks = []
    left = n
    while left > 0:
        chunk = stream.read(left)
        if not chunk:
            if left == n:
                return None
            raise ProtocolError(f"stream ended inside a frame ({n - left} of {n} bytes)")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> Optional[Tuple[dict, Dict[str, np.ndarray]]]:
    """The next frame as (header, tensors by name), or None at a clean end of stream."""
    prefix = _read_exact(stream, 4)
    if prefix is None:
        return None
    (length,) = struct.unpack("<I", prefix)
    if length > MAX_HEADER_BYTES:
        raise ProtocolError(f"frame header of {length} bytes is too large")
    raw = _read_exact(stream, length)
    header = json.loads(raw.decode("utf-8")) if raw else {}
    tensors: Dict[str, np.ndarray] = {}
    for spec in header.get("tensors", []):
        dtype = DTYPES.get(spec["dtype"])
        if dtype is None:
            raise ProtocolError(f"tensor {spec['name']}: unknown dtype {spec['dtype']}")
        data = _read_exact(stream, int(spec["bytes"])) or b""
        array = np.frombuffer(data, dtype=dtype)
        tensors[spec["name"]] = array.reshape(spec["shape"])
    return header, tensors


def write_frame(stream: BinaryIO, header: dict, tensors: Optional[Dict[str, np.ndarray]] = None) -> None:
    payloads: List[bytes] = []
    specs = []
    for name, array in (tensors or {}).items():
        kind = "i32" if array.dtype == np.int32 else "f32"
        data = np.ascontiguousarray(array, dtype=DTYPES[kind]).tobytes()
        specs.append({"name": name, "dtype": kind, "shape": list(array.shape), "bytes": len(data)})
        payloads.append(data)
    if specs:
        header = {**header, "tensors": specs}
    raw = json.dumps(header, allow_nan=True).encode("utf-8")
    stream.write(struct.pack("<I", len(raw)) + raw + b"".join(payloads))
    stream.flush()
