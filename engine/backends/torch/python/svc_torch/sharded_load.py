"""
An FSDP rank's base, read into its own shard only. Under FSDP the base is built on the meta device
(no storage), wrapped with the LoRA and sharded (fsdp.py) before any weight is read; then
`materialise` allocates what this rank holds (its shard of each layer's weights, the embeddings,
norm and head whole) and streams the file one weight at a time, each read whole (dequantised for a
GGUF), its share copied in, and dropped before the next. A rank's peak is thus its shard plus one
weight, not the whole model.

`to_empty` leaves every tensor uninitialised, buffers included: the rotary embeddings' inverse
frequencies (computed when the model was built, not read from the file) are kept aside and put
back, so the positions the model sees are those of the one-process path.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Tuple

import torch


class DeferredWeights:
    """The weights of a base built on the meta device, and how to read them once it is sharded."""

    def __init__(
        self,
        model: torch.nn.Module,
        stream: Callable[[Callable[[str, torch.Tensor, Optional[torch.dtype]], None]], None],
        finish: Callable[[torch.nn.Module], None],
        unread: Iterable[str] = (),
    ):
        self.model = model
        # stream(place) reads every weight of the file and calls place(name, value, dtype) for each
        self.stream = stream
        # finish(model) after the weights: ties the head, scales RoPE as the file says
        self.finish = finish
        # Parameters the file has no tensor for and that are never used (Gemma 4's shared k/v): zeros
        self.unread = set(unread)
        # The module and attribute of every parameter and buffer by name: the modules outlive PEFT's
        # wrapping and FSDP's sharding, which change the names and replace the tensors.
        self.slots: Dict[str, Tuple[torch.nn.Module, str]] = {}
        for prefix, module in model.named_modules():
            for attr, tensor in [*module._parameters.items(), *module._buffers.items()]:
                if tensor is not None:  # a module's absent bias is registered as None
                    self.slots[f"{prefix}.{attr}" if prefix else attr] = (module, attr)

    def materialise(self, root: torch.nn.Module, device: torch.device) -> None:
        """Allocates `root` (the adapted, sharded model) on `device` and fills the base's weights from the file."""
        kept: List[Tuple[torch.nn.Module, str, torch.Tensor]] = [
            (module, name, buffer) for module in root.modules() for name, buffer in module._buffers.items() if buffer is not None and not buffer.is_meta
        ]
        root.to_empty(device=device)
        for module, name, buffer in kept:
            module._buffers[name] = buffer.to(device)
        filled = set()

        def place(name: str, value: torch.Tensor, dtype: Optional[torch.dtype]) -> None:
            slot = self.slots.get(name)
            if slot is None:
                raise ValueError(f"the model has no tensor {name} to load")
            copy_shard(getattr(*slot), value)
            filled.add(name)

        self.stream(place)
        for name in self.unread - filled:
            with torch.no_grad():
                local_part(getattr(*self.slots[name])).zero_()
            filled.add(name)
        self.finish(self.model)
        head = self.model.get_output_embeddings()
        tied = getattr(head, "weight", None) is not None and head.weight is getattr(self.model.get_input_embeddings(), "weight", None)
        params = {name for name, (module, attr) in self.slots.items() if attr in module._parameters}
        missing = sorted(n for n in params - filled if not (tied and self.slots[n][0] is head))
        if missing:
            raise ValueError(f"the base's file is missing tensor for {missing[0]}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))


def local_part(tensor: torch.Tensor) -> torch.Tensor:
    """What this rank holds of a tensor: a sharded parameter's local shard, else the tensor itself."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


@torch.no_grad()
def copy_shard(target: torch.Tensor, value: torch.Tensor) -> None:
    """Copies into `target` this rank's share of `value`, the whole tensor: for a parameter FSDP
    sharded along a dimension, the chunk of that dimension torch.chunk gives this rank (FSDP2's
    split), taken on the host before it goes to the device."""
    local = local_part(target)
    if local is not target:
        (placement,) = target.placements
        mesh = target.device_mesh
        chunks = torch.chunk(value.reshape(target.shape), mesh.size(), dim=placement.dim)
        rank = mesh.get_local_rank()
        value = chunks[rank] if rank < len(chunks) else value.new_empty(local.shape)
    if tuple(value.shape) != tuple(local.shape):
        value = value.reshape(local.shape)
    local.copy_(value)
