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
DTYPE_CHOICES = ("auto", *DTYPES)


def cpu_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX on x86, the BF16
    extension on Arm). Without it bfloat16 is emulated and slower than float32."""
    cpu = getattr(torch, "cpu", None)
    for probe in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        check = getattr(cpu, probe, None)
        try:
            if check is not None and check():
                return True
        except Exception:  # a probe this torch has but cannot run here
            pass
    return cpuinfo_has_bf16(cpuinfo)


def cpuinfo_has_bf16(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """The same question asked of Linux's /proc/cpuinfo flags (x86 `flags`, Arm `Features`)."""
    try:
        with open(cpuinfo) as file:
            flags = {word for line in file if line.lower().startswith(("flags", "features")) for word in line.split(":", 1)[-1].split()}
    except OSError:
        return False
    return bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})


def compute_dtype(device: torch.device, requested: Optional[str] = None, cpu_bf16: Optional[bool] = None) -> torch.dtype:
    """The base model's dtype. "auto" (the default): bfloat16 on a GPU that supports it (else
    float16), bfloat16 on a CPU that computes it in hardware, float32 elsewhere (MPS included).
    `requested` (load's dtype, else SVC_TORCH_DTYPE) overrides. The LoRA stays float32 either way."""
    name = requested or os.environ.get("SVC_TORCH_DTYPE") or "auto"
    if name not in DTYPE_CHOICES:
        raise ValueError(f"unknown dtype {name!r} (expected one of {', '.join(DTYPE_CHOICES)})")
    if name != "auto":
        if device.type == "cpu" and name == "float16":
            raise ValueError("float16 is not supported on CPU; use bfloat16 or float32")
        return DTYPES[name]
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu" and (cpu_has_bf16() if cpu_bf16 is None else cpu_bf16):
        return torch.bfloat16
    return torch.float32


def configure_threads() -> int:
    # Debian's torch starts with one thread. SVC_TORCH_THREADS wins; else the cores this process may
    # really use, less one for the cloud and the worker beside it: threads past the cores a cgroup
    # or an affinity mask allows only wait on each other.
    # Ranks of one job on one machine (torchrun's LOCAL_WORLD_SIZE) split those threads between them.
    local_ranks = max(1, int(os.environ.get("LOCAL_WORLD_SIZE") or 1))
    wanted = int(os.environ.get("SVC_TORCH_THREADS") or 0) or max(1, training_threads(usable_cpus()) // local_ranks)
    torch.set_num_threads(wanted)
    return torch.get_num_threads()


def training_threads(cpus: int) -> int:
    """Threads to train with on `cpus` usable cores: one is left to the cloud when there are more than 2."""
    return cpus - 1 if cpus > 2 else max(1, cpus)


def usable_cpus(cgroup_root: str = "/sys/fs/cgroup") -> int:
    """The cores this process may run on (its affinity mask), capped by its cgroup's CPU quota."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no affinity call
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root)
    if quota is not None:
        cpus = min(cpus, max(1, int(quota)))
    return max(1, cpus)


def cgroup_cpu_quota(cgroup_root: str = "/sys/fs/cgroup") -> Optional[float]:
    """The cgroup's CPU limit in cores (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us`), None when unlimited."""

    def read(name: str) -> Optional[str]:
        try:
            with open(os.path.join(cgroup_root, name)) as file:
                return file.read().strip()
        except OSError:
            return None

    v2 = read("cpu.max")
    if v2 is not None:
        fields = v2.split()
        quota, period = (fields + ["max", "100000"])[:2]
    else:
        quota, period = read("cpu/cpu.cfs_quota_us") or "max", read("cpu/cpu.cfs_period_us") or "100000"
    try:
        quota_us, period_us = int(quota), int(period)
    except ValueError:  # "max": no limit
        return None
    return quota_us / period_us if quota_us > 0 and period_us > 0 else None


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


def _status_bytes(field: str) -> Optional[int]:
    """A size from /proc/self/status (VmRSS, VmHWM) in bytes; None where there is none (not Linux)."""
    try:
        with open("/proc/self/status") as file:
            for line in file:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def start_peak_rss() -> int:
    """Starts measuring a peak: resets the process's high-water mark (VmHWM) to its current resident
    memory where Linux allows it; returns that resident memory in bytes."""
    try:
        with open("/proc/self/clear_refs", "w") as file:
            file.write("5")
    except OSError:
        pass
    return _status_bytes("VmRSS") or 0


def peak_rss_since(start: int) -> int:
    """Bytes the resident memory peaked above `start` (start_peak_rss) since then."""
    import resource

    peak = _status_bytes("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return max(0, peak - start)
