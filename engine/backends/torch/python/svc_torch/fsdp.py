"""
Fully sharded data parallelism (torch FSDP2, `fully_shard`) for a job whose ranks share one copy
of the frozen base: each decoder layer's base weights are split across the ranks and gathered
(all-gather) only while that layer runs, forward and backward, then freed again. The LoRA
parameters are left out of the sharding (ignored_params): they are small, every rank keeps them
whole, and their gradients are summed across ranks by the same all-reduce as data parallelism
(distributed.py), so the optimiser step, get_lora and checkpoints are unchanged. The embeddings,
final norm and output head stay whole on every rank: the loss reads the head's weight directly
(training.py), and a tied head is the embeddings' own tensor.

Every rank must run every layer's forward (and backward) in step, since each layer's gather is
a collective: a rank without rows of a batch runs a masked-out row (server.py).
"""

from __future__ import annotations

from typing import Iterable

import torch


def shard_decoder_layers(model: torch.nn.Module, keep_whole: Iterable[torch.Tensor], device: torch.device) -> int:
    """Shards each decoder layer of `model` (a PEFT-wrapped transformers model) across the ranks; returns the layer count."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    decoder = base.get_decoder()
    layers = getattr(decoder, "layers", None)
    if layers is None or len(layers) == 0:
        raise ValueError(f"FSDP needs the model's decoder layers; {type(decoder).__name__} has no .layers")
    world = torch.distributed.get_world_size()
    mesh = init_device_mesh(device.type, (world,))
    ignored = set(keep_whole)
    layer_params = {id(p) for layer in layers for p in layer.parameters()}
    # The decoder's own parameters outside its layers (embeddings, norm) stay whole: the root unit
    # only orders the layers' gathers.
    ignored |= {p for p in decoder.parameters() if id(p) not in layer_params}
    for layer in layers:
        fully_shard(layer, mesh=mesh, ignored_params=ignored)
    fully_shard(decoder, mesh=mesh, ignored_params=ignored)
    return len(layers)


def held_parameter_bytes(model: torch.nn.Module) -> int:
    """Bytes of parameters this rank holds (a sharded parameter counts its local shard)."""
    total = 0
    for p in model.parameters():
        local = p.to_local() if hasattr(p, "to_local") else p
        total += local.numel() * local.element_size()
    return total
