"""
Data parallelism across processes started by torchrun (torch.distributed.run): one rank per CPU
process, GPU or node, each with the whole base (DDP) or a shard of its layers (FSDP, fsdp.py).
Rank 0 alone speaks the protocol; it broadcasts every request that changes
the model (load, init_lora, train_step, eval, shutdown) to the other ranks, which run it on their
slice of the batch's rows. Each rank's loss is its masked sum over the whole batch's masked-token
count, so summing the LoRA gradients across ranks (one all-reduce, as DDP does) gives exactly the
one-process gradient of the full batch, and every rank then takes the same clipped AdamW step.
"""

from __future__ import annotations

import ctypes
import datetime
import os
import signal
import sys
from typing import TYPE_CHECKING, List, Optional, Tuple

if TYPE_CHECKING:
    import torch

# Requests every rank runs; the rest (hello, logits, grads, get_lora, memory) rank 0 answers alone.
COLLECTIVE_OPS = frozenset({"load", "init_lora", "train_step", "eval", "shutdown"})
# Under FSDP every forward pass gathers each layer's weights from all ranks, so the requests that
# run the model (logits, grads) need every rank too.
SHARDED_COLLECTIVE_OPS = COLLECTIVE_OPS | {"logits", "grads"}

# Followers wait for rank 0's next request for as long as the job lasts (tokenising, uploading a
# checkpoint): a dead rank is noticed by torchrun, which stops the others, not by this timeout.
IDLE_TIMEOUT = datetime.timedelta(days=7)


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE") or 1)


def is_distributed() -> bool:
    return world_size() > 1


class Ranks:
    """This process's place in the job and the collectives the server needs."""

    def __init__(self):
        import torch
        import torch.distributed as dist

        self.dist = dist
        self.rank = int(os.environ.get("RANK") or 0)
        self.local_rank = int(os.environ.get("LOCAL_RANK") or 0)
        self.world = world_size()
        self.backend = os.environ.get("SVC_TORCH_DIST_BACKEND") or ("nccl" if torch.cuda.is_available() else "gloo")
        # "fsdp": the base's layers sharded across the ranks (fsdp.py); else each rank holds it whole (DDP).
        self.strategy = os.environ.get("SVC_TORCH_STRATEGY") or "ddp"
        if self.strategy not in ("ddp", "fsdp"):
            raise ValueError(f"SVC_TORCH_STRATEGY must be ddp or fsdp, not {self.strategy!r}")
        die_with_parent()
        if self.backend == "nccl":
            torch.cuda.set_device(self.local_rank)
        dist.init_process_group(backend=self.backend, timeout=IDLE_TIMEOUT)
        # Requests travel as pickled objects on a CPU (gloo) group even when gradients go over NCCL.
        self.control = dist.new_group(backend="gloo", timeout=IDLE_TIMEOUT) if self.backend != "gloo" else None

    @property
    def speaker(self) -> bool:
        return self.rank == 0

    @property
    def sharded(self) -> bool:
        return self.strategy == "fsdp"

    @property
    def collective_ops(self) -> frozenset:
        return SHARDED_COLLECTIVE_OPS if self.sharded else COLLECTIVE_OPS

    def broadcast_request(self, frame: Optional[Tuple[dict, dict]]) -> Tuple[dict, dict]:
        """Rank 0 passes the request it read; every rank returns it."""
        box: List[object] = [frame]
        self.dist.broadcast_object_list(box, src=0, group=self.control)
        return box[0]  # type: ignore[return-value]

    def rows(self, batch: int) -> slice:
        """This rank's contiguous share of a batch's rows (the first ranks take one more when uneven)."""
        base, extra = divmod(batch, self.world)
        start = self.rank * base + min(self.rank, extra)
        return slice(start, start + base + (1 if self.rank < extra else 0))

    def sum_(self, tensor: torch.Tensor) -> torch.Tensor:
        self.dist.all_reduce(tensor, op=self.dist.ReduceOp.SUM)
        return tensor

    def gather(self, value: object) -> list:
        """Every rank's `value`, in rank order, on every rank."""
        out: List[object] = [None] * self.world
        self.dist.all_gather_object(out, value, group=self.control)
        return out

    def close(self) -> None:
        try:
            self.dist.destroy_process_group()
        except Exception:
            pass


def is_communication_error(err: BaseException) -> bool:
    """A collective that failed means a rank is gone: the process group cannot be used again."""
    import torch.distributed as dist

    kinds = tuple(k for k in (getattr(dist, "DistError", None), getattr(dist, "DistBackendError", None)) if k)
    text = str(err)
    return (bool(kinds) and isinstance(err, kinds)) or "gloo" in text.lower() or "nccl" in text.lower()


def die_with_parent() -> None:
    """Linux: end this rank when torchrun ends, even by SIGKILL, so no rank outlives its job."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == 1:  # torchrun already died before the call took effect
            os._exit(1)
    except Exception:
        pass
