"""
A Hugging Face folder as the base: transformers reads its own safetensors (from_pretrained), so
the weights are the checkpoint's, with no GGUF round trip. The GGUF llama.cpp's converter made of
the same folder is still what serving loads and what the seam's names refer to: its tensor names
give the GGUF -> transformers name map (the LoRA's seam names, PROTOCOL.md) and, for llama, which
projections' rows the converter permuted, so an adapter trained here exports like one trained
from the GGUF.
"""

from __future__ import annotations

import os
from typing import Callable, Dict

import torch

from .gguf_base import GgufBase, _field, open_gguf


def load_hf_base(
    folder: str,
    gguf_path: str,
    device: torch.device,
    dtype: torch.dtype,
    attention: str,
    on_progress: Callable[[str, int, int], None],
    deferred: bool = False,
) -> GgufBase:
    """deferred: the parameters stay on the meta device and base.weights reads them later (FSDP, sharded_load.py)."""
    from transformers import AutoModelForCausalLM
    from transformers.modeling_gguf_pytorch_utils import TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map

    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise ValueError(f"the Hugging Face folder {folder} has no config.json")
    reader = open_gguf(gguf_path)
    architecture = str(_field(reader, "general.architecture"))
    present = {t.name for t in reader.tensors}
    total = sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder) if name.endswith(".safetensors"))
    on_progress("safetensors", 0, total)
    weights = None
    if deferred:
        model, weights = _deferred_model(folder, dtype, attention, total, on_progress)
    else:
        # Straight onto the device: no float32 copy on the host when it is a GPU.
        placement = {"device_map": {"": device}} if device.type != "cpu" else {}
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, attn_implementation=attention, **placement)
        on_progress("safetensors", total, total)
    model.requires_grad_(False)
    model.eval()

    processor = TENSOR_PROCESSORS.get(architecture, TensorProcessor)(config=model.config.to_dict())
    known = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    gguf_to_hf: Dict[str, str] = {k: v for k, v in get_gguf_hf_weights_map(model, processor).items() if k in present and v in known}
    permuted: Dict[str, int] = {}
    if processor.__class__.__name__ == "LlamaTensorProcessor":
        config = model.config
        heads = int(config.num_attention_heads)
        kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
        for name in gguf_to_hf:
            if ".attn_q." in name:
                permuted[name] = heads
            elif ".attn_k." in name:
                permuted[name] = kv_heads
    parameters = sum(p.numel() for p in model.parameters())
    return GgufBase(model, architecture, gguf_to_hf, permuted, parameters, weights=weights)


def _deferred_model(folder: str, dtype: torch.dtype, attention: str, total: int, on_progress: Callable[[str, int, int], None]):
    """The folder's model on the meta device, and its safetensors to stream one tensor at a time."""
    from accelerate import init_empty_weights
    from safetensors import safe_open
    from transformers import AutoConfig, AutoModelForCausalLM

    from .sharded_load import DeferredWeights

    config = AutoConfig.from_pretrained(folder)
    with init_empty_weights():  # parameters on the meta device, buffers (RoPE tables) real
        model = AutoModelForCausalLM.from_config(config, attn_implementation=attention, dtype=dtype)
    names = {name for name, _ in model.named_parameters()} | {name for name, _ in model.named_buffers()}

    def stream(place) -> None:
        loaded = 0
        for file in sorted(f for f in os.listdir(folder) if f.endswith(".safetensors")):
            with safe_open(os.path.join(folder, file), framework="pt") as tensors:
                for key in tensors.keys():
                    if key in names:
                        place(key, tensors.get_tensor(key), dtype)
            loaded += os.path.getsize(os.path.join(folder, file))
            on_progress("safetensors", loaded, total)

    return model, DeferredWeights(model, stream, lambda target: target.tie_weights())
