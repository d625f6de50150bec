"""
dequant.c built with the machine's C compiler and called through ctypes: kept-quantised weights
dequantise in one pass, straight into their compute dtype. Built once per machine into svc's cache
(`$XDG_CACHE_HOME/svc/kernels`, else `~/.cache/svc/kernels`), named by a hash of the source, the
compiler and the flags, and written under a temporary name first, so ranks starting together never
load half a file. Where no compiler works (Windows without one, a bare container), `load()` says
why and quantized.py keeps its torch dequantisers, which give the same floats.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional, Tuple

import torch

SOURCE = Path(__file__).with_name("dequant.c")
# Contraction off: a fused multiply-add rounds once where gguf-py's numpy rounds twice.
FLAGS = ["-O3", "-ffp-contract=off", "-fPIC", "-shared"]
# Tried first, dropped where the compiler does not know it (clang on some Apple Silicon Macs).
NATIVE_ARCH = "-march=native"
FUNCTIONS = {8: "svc_dequantize_q8_0", 12: "svc_dequantize_q4_k", 14: "svc_dequantize_q6_k"}
# Blocks per call below which one thread does the whole weight (a thread hand-off costs more).
MIN_BLOCKS_PER_THREAD = 256


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "svc" / "kernels"


def _compiler() -> Optional[str]:
    for name in filter(None, [os.environ.get("CC"), "cc", "gcc", "clang"]):
        found = shutil.which(name)
        if found:
            return found
    return None


def _compiler_version(compiler: str) -> str:
    done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.splitlines()[0] if done.stdout else ""


def _build(compiler: str) -> Path:
    """The shared library for this source, compiler and machine, compiled when not cached yet."""
    source = SOURCE.read_bytes()
    last_error = ""
    for flags in ([*FLAGS, NATIVE_ARCH], FLAGS):
        identity = [compiler, _compiler_version(compiler), " ".join(flags), platform.machine(), platform.node()]
        key = hashlib.sha256(b"\0".join([source, *(part.encode() for part in identity)]))
        target = _cache_dir() / f"dequant-{key.hexdigest()[:16]}{'.dll' if os.name == 'nt' else '.so'}"
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=target.parent, prefix=".dequant-", suffix=target.suffix)
        os.close(fd)
        try:
            done = subprocess.run([compiler, *flags, "-o", partial, str(SOURCE)], capture_output=True, text=True, timeout=120)
            if done.returncode == 0:
                os.replace(partial, target)
                return target
            errors = [line for line in (done.stderr or done.stdout).splitlines() if "error" in line]
            last_error = errors[0] if errors else f"exit code {done.returncode}"
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    raise RuntimeError(f"{Path(compiler).name} could not build dequant.c: {last_error}")


class NativeDequantizer:
    """The built library's three dequantisers, each block range on its own thread."""

    def __init__(self, library: ctypes.CDLL, threads: int):
        self.functions = {}
        for ggml_type, name in FUNCTIONS.items():
            fn = getattr(library, name)
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int]
            fn.restype = None
            self.functions[ggml_type] = fn
        self.threads = max(1, threads)
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="svc-dequant") if self.threads > 1 else None

    def supports(self, ggml_type: int, blocks: torch.Tensor, dtype: torch.dtype) -> bool:
        return ggml_type in self.functions and blocks.device.type == "cpu" and dtype in (torch.bfloat16, torch.float32)

    def dequantize(self, ggml_type: int, blocks: torch.Tensor, block_bytes: int, per_block: int, out: torch.Tensor) -> torch.Tensor:
        """Blocks (uint8, rows of whole blocks) into `out` (bfloat16 or float32, contiguous)."""
        blocks = blocks.contiguous()
        count = blocks.numel() // block_bytes
        fn, bf16 = self.functions[ggml_type], int(out.dtype == torch.bfloat16)
        source, target, item = blocks.data_ptr(), out.data_ptr(), out.element_size()
        parts = min(self.threads, max(1, count // MIN_BLOCKS_PER_THREAD))
        if parts == 1 or self.pool is None:
            fn(source, count, target, bf16)
            return out
        bounds = [count * i // parts for i in range(parts + 1)]
        # ctypes lets go of the GIL for the call, so the ranges run at once.
        calls = [
            self.pool.submit(fn, source + a * block_bytes, b - a, target + a * per_block * item, bf16) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        for call in calls:
            call.result()
        return out


_loaded: Optional[Tuple[Optional[NativeDequantizer], str]] = None


def load() -> Tuple[Optional[NativeDequantizer], str]:
    """The native dequantiser (built on first use) and a line saying what dequantises, or None and why
    the torch dequantisers do. SVC_TORCH_NATIVE_DEQUANT=0 turns it off."""
    global _loaded
    if _loaded is None:
        _loaded = _load()
    return _loaded


def _load() -> Tuple[Optional[NativeDequantizer], str]:
    if os.environ.get("SVC_TORCH_NATIVE_DEQUANT") == "0":
        return None, "torch dequantisers (SVC_TORCH_NATIVE_DEQUANT=0)"
    compiler = _compiler()
    if compiler is None:
        return None, "torch dequantisers (no C compiler found: cc, gcc or clang, or $CC)"
    try:
        library = ctypes.CDLL(str(_build(compiler)))
    except (OSError, RuntimeError, subprocess.SubprocessError) as err:
        return None, f"torch dequantisers ({err})"
    return NativeDequantizer(library, torch.get_num_threads()), f"native dequantiser built by {Path(compiler).name}"
