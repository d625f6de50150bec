"""
A GGUF base model as a transformers model. transformers reads the GGUF's metadata into its own
config and knows, per architecture, how llama.cpp's converter changed each tensor (the q/k row
permutation of llama, Gemma's norm offset); svc only streams the tensors: one at a time,
dequantised by gguf-py, handed to transformers' processor, and put into a model whose
parameters were never allocated before, so peak memory is the model plus one tensor.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

import numpy as np
import torch


@dataclass
class GgufBase:
    model: torch.nn.Module
    architecture: str
    # GGUF tensor name (blk.0.attn_q.weight) -> transformers parameter name (model.layers.0.self_attn.q_proj.weight)
    gguf_to_hf: Dict[str, str]
    # GGUF names of projections whose rows llama.cpp permuted, with the head count the permutation used
    permuted_rows: Dict[str, int] = field(default_factory=dict)

    PROJECTIONS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")

    def projection_shapes(self) -> Dict[str, list]:
        """[out, in] of every LoRA-adaptable projection the model has, keyed blk.N.<proj>."""
        params = dict(self.model.named_parameters())
        shapes = {}
        for gguf_name, hf_name in self.gguf_to_hf.items():
            parts = gguf_name.split(".")
            if len(parts) == 4 and parts[0] == "blk" and parts[2] in self.PROJECTIONS and parts[3] == "weight" and hf_name in params:
                shapes[f"blk.{parts[1]}.{parts[2]}"] = list(params[hf_name].shape)
        return shapes


def _transformers_config(path: str):
    from transformers import AutoConfig
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES, load_gguf_checkpoint

    try:
        parsed = load_gguf_checkpoint(path, return_tensors=False)
    except ValueError as err:
        raise ValueError(f"{path}: {err} (transformers reads GGUF for: {', '.join(sorted(GGUF_SUPPORTED_ARCHITECTURES))})") from None
    config = dict(parsed["config"])
    model_type = config.pop("model_type")
    return AutoConfig.for_model(model_type, **config), parsed["config"]


def _field(reader, key: str):
    field = reader.fields.get(key)
    return None if field is None else field.contents()


def _complete_config(config, reader, architecture: str) -> None:
    """What transformers' GGUF reader leaves out but llama.cpp reads from the same file."""
    head_dim = _field(reader, f"{architecture}.attention.key_length")
    if head_dim and architecture in ("qwen2", "qwen3", "llama"):
        config.head_dim = int(head_dim)  # Qwen3's class default (128) is not every file's
    if architecture == "gemma3" and head_dim:
        config.query_pre_attn_scalar = int(head_dim)  # llama.cpp scales scores by 1/sqrt(head width)
    if _field(reader, f"{architecture}.rope.scaling.type") == "linear":
        factor = float(_field(reader, f"{architecture}.rope.scaling.factor") or 1.0)
        params = dict(getattr(config, "rope_parameters", None) or {})
        config.rope_parameters = {**params, "rope_type": "linear", "factor": factor}


def _rope_factors(reader) -> Optional[np.ndarray]:
    """Llama 3.1+ GGUFs carry their RoPE scaling as per-frequency divisors (rope_freqs.weight)."""
    for tensor in reader.tensors:
        if tensor.name == "rope_freqs.weight":
            return np.array(tensor.data, dtype=np.float32).reshape(-1)
    return None


def _apply_rope_factors(model: torch.nn.Module, factors: np.ndarray) -> None:
    """Divides each rotary embedding's inverse frequencies by llama.cpp's factors, as ggml_rope_ext does."""
    divisor = torch.from_numpy(factors)
    for module in model.modules():
        inv = getattr(module, "inv_freq", None)
        if isinstance(inv, torch.Tensor) and inv.shape == divisor.shape:
            module.inv_freq = inv / divisor.to(inv.device, inv.dtype)
            if hasattr(module, "original_inv_freq"):
                module.original_inv_freq = module.inv_freq


def load_gguf_base(path: str, device: torch.device, dtype: torch.dtype, attention: str,
                   on_tensor: Callable[[str, int, int], None]) -> GgufBase:
    """Builds the model from the GGUF at `path`; on_tensor(name, loaded_bytes, total_bytes) after each tensor."""
    from accelerate import init_empty_weights
    from accelerate.utils import set_module_tensor_to_device
    from gguf import GGUFReader, dequantize
    from transformers import AutoModelForCausalLM
    from transformers.modeling_gguf_pytorch_utils import TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map

    config, raw_config = _transformers_config(path)
    reader = GGUFReader(path)
    architecture = str(_field(reader, "general.architecture"))
    _complete_config(config, reader, architecture)
    with init_empty_weights():  # parameters on the meta device, buffers (RoPE tables) real
        model = AutoModelForCausalLM.from_config(config, attn_implementation=attention, dtype=dtype)
    processor = TENSOR_PROCESSORS.get(architecture, TensorProcessor)(config=raw_config)
    gguf_to_hf = get_gguf_hf_weights_map(model, processor)

    total = sum(4 * int(t.n_elements) for t in reader.tensors)
    loaded = 0
    expected = dict(model.named_parameters())
    for tensor in reader.tensors:
        hf_name = gguf_to_hf.get(tensor.name)
        if hf_name is not None and hf_name in expected:
            weights = processor.process(weights=dequantize(tensor.data, tensor.tensor_type), name=tensor.name,
                                        tensor_key_mapping=gguf_to_hf, parsed_parameters={}).weights
            want = tuple(expected[hf_name].shape)
            if tuple(weights.shape) != want:
                raise ValueError(f"tensor {tensor.name} has shape {list(weights.shape)}, expected {list(want)} for {hf_name}")
            value = torch.from_numpy(np.ascontiguousarray(weights, dtype=np.float32))
            set_module_tensor_to_device(model, hf_name, device, value=value, dtype=dtype)
            del weights, value
        loaded += 4 * int(tensor.n_elements)
        on_tensor(tensor.name, loaded, total)

    model.tie_weights()
    missing = [name for name, p in model.named_parameters() if p.device.type == "meta"]
    if missing:
        raise ValueError(f"GGUF {path} is missing tensor for {missing[0]}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    for buffer_name, buffer in model.named_buffers():
        if buffer.device != device:
            set_module_tensor_to_device(model, buffer_name, device, value=buffer)
    factors = _rope_factors(reader)
    if factors is not None:
        _apply_rope_factors(model, factors)
    model.requires_grad_(False)
    model.eval()

    permuted: Dict[str, int] = {}
    if processor.__class__.__name__ == "LlamaTensorProcessor":
        heads, kv_heads = int(raw_config["num_attention_heads"]), int(raw_config["num_key_value_heads"])
        for name in gguf_to_hf:
            if ".attn_q." in name:
                permuted[name] = heads
            elif ".attn_k." in name:
                permuted[name] = kv_heads
    return GgufBase(model, architecture, gguf_to_hf, permuted)


def hf_rows(t: torch.Tensor, heads: int) -> torch.Tensor:
    """GGUF row order -> transformers' for a permuted projection (undoes convert_hf_to_gguf's permute)."""
    return t.reshape(heads, t.shape[0] // heads // 2, 2, *t.shape[1:]).transpose(1, 2).reshape(t.shape)


def gguf_rows(t: torch.Tensor, heads: int) -> torch.Tensor:
    """transformers' row order -> GGUF's (convert_hf_to_gguf's permute)."""
    return t.reshape(heads, 2, t.shape[0] // heads // 2, *t.shape[1:]).transpose(1, 2).reshape(t.shape)
