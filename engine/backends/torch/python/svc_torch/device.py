"""Picks the device (cuda > mps > cpu unless told), its thread count and the base model's compute dtype."""
from __future__ import annotations

import os
from typing import Optional, Tuple

import torch


def choose_device(requested: Optional[str]) -> torch.device:
    name = requested or os.environ.get("SVC_TORCH_DEVICE") or ""
    if name and name != "auto":
        device = torch.device(name)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {name} was asked for but torch {torch.__version__} sees no CUDA device")
        if device.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
            raise ValueError(f"device {name} was asked for but MPS is not available")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def compute_dtype(device: torch.device, requested: Optional[str] = None) -> torch.dtype:
    """bfloat16 where the GPU supports it, else float16; float32 on CPU and (for safety) MPS.
    `requested` (load's dtype, or SVC_TORCH_DTYPE) overrides: e.g. bfloat16 on CPU runs the
    reduced-precision path a GPU would, where this torch's CPU autocast supports it."""
    name = requested or os.environ.get("SVC_TORCH_DTYPE") or ""
    if name:
        if name not in DTYPES:
            raise ValueError(f"unknown dtype {name!r} (expected one of {', '.join(DTYPES)})")
        if device.type == "cpu" and name == "float16":
            raise ValueError("float16 is not supported on CPU; use bfloat16 or float32")
        return DTYPES[name]
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def configure_threads() -> int:
    # Debian's torch starts with one thread; use every core unless SVC_TORCH_THREADS says otherwise.
    wanted = int(os.environ.get("SVC_TORCH_THREADS") or 0) or (os.cpu_count() or 1)
    torch.set_num_threads(wanted)
    return torch.get_num_threads()


def describe(device: torch.device, threads: int) -> str:
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return f"cuda:{index} ({torch.cuda.get_device_name(index)})"
    if device.type == "cpu":
        return f"cpu ({threads} threads)"
    return str(device)


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def peak_memory(device: torch.device) -> Tuple[int, int]:
    """(peak RSS of this process, peak accelerator bytes) for the bench and logs."""
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    gpu = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else 0
    return rss, gpu
