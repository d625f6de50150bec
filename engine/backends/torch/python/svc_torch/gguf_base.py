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

QUANT_NAMES = {8: "Q8_0", 12: "Q4_K", 14: "Q6_K"}


@dataclass
class GgufBase:
    model: torch.nn.Module
    architecture: str
    # GGUF tensor name (blk.0.attn_q.weight) -> transformers parameter name (model.layers.0.self_attn.q_proj.weight)
    gguf_to_hf: Dict[str, str]
    # GGUF names of projections whose rows llama.cpp permuted, with the head count the permutation used
    permuted_rows: Dict[str, int] = field(default_factory=dict)
    # Elements of the base, its quantised projections' counted as their weights' (not their bytes)
    parameters: int = 0
    # GGUF names of the projections kept quantised (quantized.py), with their type (Q4_K...)
    quantized: Dict[str, str] = field(default_factory=dict)
    # GGUF names of the embedding tables and output head kept quantised, with their type
    quantized_tables: Dict[str, str] = field(default_factory=dict)
    # Under FSDP: the weights still to be read, once the model is sharded (sharded_load.py); else None
    weights: Optional[object] = None

    PROJECTIONS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")

    def projection_shapes(self) -> Dict[str, list]:
        """[out, in] of every LoRA-adaptable projection the model has, keyed blk.N.<proj>."""
        params = dict(self.model.named_parameters())
        modules = dict(self.model.named_modules())
        shapes = {}
        for gguf_name, hf_name in self.gguf_to_hf.items():
            parts = gguf_name.split(".")
            if not (len(parts) == 4 and parts[0] == "blk" and parts[2] in self.PROJECTIONS and parts[3] == "weight"):
                continue
            if hf_name in params:
                shapes[f"blk.{parts[1]}.{parts[2]}"] = list(params[hf_name].shape)
            elif gguf_name in self.quantized:  # no weight parameter: its blocks are a buffer
                layer = modules[hf_name[: -len(".weight")]]
                shapes[f"blk.{parts[1]}.{parts[2]}"] = [layer.out_features, layer.in_features]
        return shapes


def _field(reader, key: str, default=None):
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def open_gguf(path: str):
    """gguf-py's reader, except that it steps over long arrays (a tokenizer's 262k tokens and
    merges) instead of making two numpy views per entry, which takes minutes. Their entries stay
    counted (len(field.data)) but unreadable; svc reads only the model's own metadata and the
    tensors, and llama.cpp reads the tokenizer."""
    import struct

    from gguf import GGUFReader, GGUFValueType

    class Reader(GGUFReader):
        LONG = 1024

        def _get_field_parts(self, orig_offs, raw_type):
            if GGUFValueType(raw_type) != GGUFValueType.ARRAY:
                return super()._get_field_parts(orig_offs, raw_type)
            item_type = self._get(orig_offs, np.uint32)
            count = self._get(orig_offs + 4, np.uint64)
            if int(count[0]) <= self.LONG:
                return super()._get_field_parts(orig_offs, raw_type)
            offs = orig_offs + 12
            kind = GGUFValueType(int(item_type[0]))
            if kind == GGUFValueType.STRING:
                view = memoryview(self.data)
                for _ in range(int(count[0])):
                    offs += 8 + struct.unpack_from("<Q", view, offs)[0]
            else:
                offs += int(count[0]) * np.dtype(self.gguf_scalar_to_np[kind]).itemsize
            return offs - orig_offs, [item_type, count], list(range(int(count[0]))), [GGUFValueType.ARRAY, kind]

    return Reader(path)


class _MetadataOnly:
    """The reader as transformers' config parser sees it: without the tokenizer's arrays, which
    it would turn into Python objects one entry at a time (seconds for a 262k vocabulary)."""

    def __init__(self, reader):
        self.fields = {k: v for k, v in reader.fields.items() if not k.startswith("tokenizer.")}
        self.tensors = reader.tensors


def _transformers_config(reader, path: str) -> dict:
    """transformers' own reading of the GGUF's metadata into its config fields (one parse of the file)."""
    import gguf
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES, load_gguf_checkpoint

    opened = gguf.GGUFReader
    gguf.GGUFReader = lambda _path: _MetadataOnly(reader)  # load_gguf_checkpoint imports it from gguf when called
    try:
        raw = dict(load_gguf_checkpoint(path, return_tensors=False)["config"])
    except ValueError as err:
        raise ValueError(f"{path}: {err} (transformers reads GGUF for: {', '.join(sorted(GGUF_SUPPORTED_ARCHITECTURES))})") from None
    finally:
        gguf.GGUFReader = opened
    if "vocab_size" not in raw and "tokenizer.ggml.tokens" in reader.fields:
        raw["vocab_size"] = len(reader.fields["tokenizer.ggml.tokens"].data)
    return raw


def _complete_config(raw: dict, reader, architecture: str) -> None:
    """What transformers' GGUF reader leaves out (or cannot take) but llama.cpp reads from the same file."""
    get = lambda key, default=None: _field(reader, f"{architecture}.{key}", default)  # noqa: E731
    layers = int(raw["num_hidden_layers"])
    head_dim = get("attention.key_length")
    if head_dim and architecture in ("llama", "qwen2", "qwen3"):
        raw["head_dim"] = int(head_dim)  # Qwen3's class default (128) is not every file's
    if get("final_logit_softcapping"):
        raw["final_logit_softcapping"] = float(get("final_logit_softcapping"))
    if architecture == "gemma3":
        # llama.cpp scales scores by 1/sqrt(head width), puts a global layer every 6th (the file
        # records no pattern) and gives the local layers RoPE base 10000.
        raw["query_pre_attn_scalar"] = int(head_dim)
        raw["layer_types"] = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)]
        full = {"rope_type": "default", "rope_theta": float(get("rope.freq_base", 1_000_000.0))}
        if get("rope.scaling.type") == "linear":
            full = {**full, "rope_type": "linear", "factor": float(get("rope.scaling.factor"))}
        raw["rope_parameters"] = {"full_attention": full, "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0}}
        raw.pop("rope_theta", None)
    elif architecture == "gemma4":
        feed_forward = get("feed_forward_length")
        if isinstance(feed_forward, list):  # per layer when the shared-KV layers' MLPs are double width
            raw["intermediate_size"] = int(feed_forward[0])
            raw["use_double_wide_mlp"] = any(int(v) != int(feed_forward[0]) for v in feed_forward)
        sliding = [bool(v) for v in get("attention.sliding_window_pattern")]
        raw["layer_types"] = ["sliding_attention" if v else "full_attention" for v in sliding]
        kv_heads = get("attention.head_count_kv")
        if isinstance(kv_heads, list):
            raw["num_key_value_heads"] = int(next(v for v, s in zip(kv_heads, sliding, strict=True) if s))
            raw["num_global_key_value_heads"] = int(next(v for v, s in zip(kv_heads, sliding, strict=True) if not s))
        raw["head_dim"] = int(get("attention.key_length_swa"))
        raw["global_head_dim"] = int(head_dim)
        raw["num_kv_shared_layers"] = int(get("attention.shared_kv_layers", 0))
        raw["hidden_size_per_layer_input"] = int(get("embedding_length_per_layer_input", 0))
        # Global layers rotate only the pairs rope_freqs leaves at 1 (the converter writes 1e30 for
        # the rest): that share of the head is the proportional RoPE's factor.
        freqs = next((t for t in reader.tensors if t.name == "rope_freqs.weight"), None)
        rotated = int(np.sum(np.asarray(freqs.data) == 1.0)) if freqs is not None else raw["global_head_dim"] // 2
        raw["rope_parameters"] = {
            "full_attention": {
                "rope_type": "proportional",
                "rope_theta": float(get("rope.freq_base")),
                "partial_rotary_factor": 2 * rotated / raw["global_head_dim"],
            },
            "sliding_attention": {"rope_type": "default", "rope_theta": float(get("rope.freq_base_swa"))},
        }
        per_layer = next((t for t in reader.tensors if t.name == "per_layer_token_embd.weight"), None)
        if per_layer is not None:
            raw["vocab_size_per_layer_input"] = int(per_layer.shape[-1])


def _complete_built_config(config, reader, architecture: str) -> None:
    """Linear RoPE scaling for the llama family, set on the built config (transformers 5's rope_parameters)."""
    if architecture in ("llama", "qwen2", "qwen3") and _field(reader, f"{architecture}.rope.scaling.type") == "linear":
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


def _shared_kv_names(model: torch.nn.Module, config) -> set:
    """The parameters of the layers that reuse an earlier layer's keys and values (see _fill_shared_kv)."""
    first = int(config.num_hidden_layers) - int(getattr(config, "num_kv_shared_layers", 0) or 0)
    names = set()
    for name, _ in model.named_parameters():
        parts = name.split(".")
        if "layers" in parts and int(parts[parts.index("layers") + 1]) >= first and any(k in name for k in ("k_proj", "v_proj", "k_norm", "v_norm")):
            names.add(name)
    return names


def _fill_shared_kv(model: torch.nn.Module, config, device: torch.device, dtype: torch.dtype) -> None:
    """Layers that reuse an earlier layer's keys and values (Gemma 4's last num_kv_shared_layers)
    have k/v projections in transformers' module that they never use; the GGUF holds none."""
    from accelerate.utils import set_module_tensor_to_device

    shared = int(getattr(config, "num_kv_shared_layers", 0) or 0)
    if not shared:
        return
    first = int(config.num_hidden_layers) - shared
    for name, p in model.named_parameters():
        parts = name.split(".")
        if (
            p.device.type == "meta"
            and "layers" in parts
            and int(parts[parts.index("layers") + 1]) >= first
            and any(k in name for k in ("k_proj", "v_proj", "k_norm", "v_norm"))
        ):
            set_module_tensor_to_device(model, name, device, value=torch.zeros(p.shape), dtype=dtype)


def _drop_pages(reader, tensor) -> None:
    """Hands a read tensor's pages of the memory-mapped file back to the page cache: touched
    pages of a mapping count in the process's resident memory, so without this a loaded model's
    peak RSS would be the model plus the whole file."""
    import mmap

    mapped = getattr(reader.data, "_mmap", None)
    if mapped is None or not hasattr(mapped, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return
    start = int(tensor.data_offset) - int(tensor.data_offset) % mmap.PAGESIZE
    end = int(tensor.data_offset) + int(tensor.n_bytes)
    try:
        mapped.madvise(mmap.MADV_DONTNEED, start, end - start)
    except (OSError, ValueError):  # a platform that refuses the advice keeps the pages: only memory, never numbers
        pass


def _row_order(processor, name: str, rows: int, gguf_to_hf: Dict[str, str]) -> Optional[np.ndarray]:
    """Where transformers' processor puts each of a projection's rows (llama's q/k permutation undone):
    the processor run on the row numbers. None when it does more than reorder rows."""
    index = np.arange(rows, dtype=np.float32).reshape(rows, 1)
    moved = np.asarray(processor.process(weights=index, name=name, tensor_key_mapping=gguf_to_hf, parsed_parameters={}).weights).reshape(-1)
    if moved.shape != (rows,) or not np.array_equal(np.sort(moved), index.reshape(-1)):
        return None
    return moved.astype(np.int64)


def _quantized_projections(model: torch.nn.Module, reader, gguf_to_hf: Dict[str, str], device: torch.device) -> Dict[str, object]:
    """Replaces each projection stored as Q8_0, Q4_K or Q6_K by a QuantizedLinear (its blocks still
    to be read); returns them by GGUF tensor name."""
    from .quantized import QUANT_TYPES, QuantizedLinear

    modules = dict(model.named_modules())
    kept: Dict[str, object] = {}
    for tensor in reader.tensors:
        parts = tensor.name.split(".")
        hf_name = gguf_to_hf.get(tensor.name)
        if not (len(parts) == 4 and parts[0] == "blk" and parts[2] in GgufBase.PROJECTIONS and parts[3] == "weight" and hf_name):
            continue
        if int(tensor.tensor_type) not in QUANT_TYPES:
            continue
        path = hf_name[: -len(".weight")]
        linear = modules.get(path)
        if type(linear) is not torch.nn.Linear:
            continue
        parent, _, child = path.rpartition(".")
        empty = torch.empty(0, dtype=torch.uint8, device=device)
        layer = QuantizedLinear(linear.in_features, linear.out_features, int(tensor.tensor_type), empty, linear.bias)
        setattr(modules[parent] if parent else model, child, layer)
        kept[tensor.name] = layer
    return kept


def _quantized_tables(model: torch.nn.Module, reader, gguf_to_hf: Dict[str, str], device: torch.device, dtype: torch.dtype) -> tuple:
    """Replaces each embedding table (nn.Embedding or Gemma's scaled one) and the output head stored as
    Q8_0, Q4_K or Q6_K by QuantizedEmbedding / QuantizedLinear, blocks still to be read. A head tied to
    the embedding becomes a QuantizedLinear that will share the embedding's blocks. Returns the tables
    by GGUF tensor name, and the tied heads by the name of the table they read."""
    from .quantized import QUANT_TYPES, QuantizedEmbedding, QuantizedLinear

    modules = dict(model.named_modules())
    empty = lambda: torch.empty(0, dtype=torch.uint8, device=device)  # noqa: E731
    tables: Dict[str, object] = {}
    tied: Dict[str, object] = {}
    present = {t.name for t in reader.tensors}
    head = model.get_output_embeddings()
    for tensor in reader.tensors:
        hf_name = gguf_to_hf.get(tensor.name)
        if not hf_name or not hf_name.endswith(".weight") or int(tensor.tensor_type) not in QUANT_TYPES:
            continue
        path = hf_name[: -len(".weight")]
        parent, _, child = path.rpartition(".")
        module = modules.get(path)
        if module is head and type(module) is torch.nn.Linear and module.bias is None:
            layer = QuantizedLinear(module.in_features, module.out_features, int(tensor.tensor_type), empty())
        elif isinstance(module, torch.nn.Embedding) and (type(module) is torch.nn.Embedding or type(module).__name__.endswith("ScaledWordEmbedding")):
            scale = getattr(module, "embed_scale", None)
            scale = None if scale is None else torch.tensor(float(scale), device=device)
            layer = QuantizedEmbedding(module.num_embeddings, module.embedding_dim, int(tensor.tensor_type), empty(), dtype, scale)
            if module is model.get_input_embeddings() and "output.weight" not in present and getattr(model.config, "tie_word_embeddings", False):
                if (
                    type(head) is torch.nn.Linear
                    and head.bias is None
                    and (head.out_features, head.in_features) == (module.num_embeddings, module.embedding_dim)
                ):
                    tied[tensor.name] = QuantizedLinear(head.in_features, head.out_features, int(tensor.tensor_type), empty())
                    model.set_output_embeddings(tied[tensor.name])
        else:
            continue
        setattr(modules[parent] if parent else model, child, layer)
        tables[tensor.name] = layer
    return tables, tied


SLICE_ELEMENTS = 1 << 24


def _in_slices(tensor, target: torch.Tensor, is_buffer: bool) -> bool:
    """Whether a tensor is large enough to be dequantised a slice of rows at a time (the embeddings:
    gguf-py's dequantisers make several float32 copies of what they are given), and may be: a
    parameter whose rows are the file's rows, and not a q/k projection, whose rows transformers
    reorders across the whole tensor."""
    rows = int(tensor.data.shape[0]) if len(tensor.data.shape) == 2 else 0
    return (
        not is_buffer
        and int(tensor.n_elements) > SLICE_ELEMENTS
        and len(target.shape) == 2
        and rows == int(target.shape[0])
        and int(target.shape[0]) * int(target.shape[1]) == int(tensor.n_elements)
        and ".attn_q." not in tensor.name
        and ".attn_k." not in tensor.name
    )


def _dequantized_in_slices(tensor, processor, gguf_to_hf: Dict[str, str], dtype: torch.dtype) -> torch.Tensor:
    """The tensor dequantised into `dtype` a slice of rows at a time, each slice through transformers'
    processor (row-wise for the tensors _in_slices admits), so the float32 copies are one slice's."""
    from gguf import dequantize

    rows = int(tensor.data.shape[0])
    width = int(tensor.n_elements) // rows
    out = torch.empty((rows, width), dtype=dtype)
    step = max(1, SLICE_ELEMENTS // width)
    for start in range(0, rows, step):
        part = dequantize(tensor.data[start : start + step], tensor.tensor_type)
        part = processor.process(weights=part, name=tensor.name, tensor_key_mapping=gguf_to_hf, parsed_parameters={}).weights
        out[start : start + step] = torch.from_numpy(np.ascontiguousarray(part, dtype=np.float32)).reshape(-1, width)
        del part
    return out


def load_gguf_base(
    path: str,
    device: torch.device,
    dtype: torch.dtype,
    attention: str,
    on_tensor: Callable[[str, int, int], None],
    keep_quantized: bool = False,
    deferred: bool = False,
) -> GgufBase:
    """Builds the model from the GGUF at `path`; on_tensor(name, loaded_bytes, total_bytes) after each tensor.
    keep_quantized: projections stored as Q8_0, Q4_K or Q6_K stay as their blocks (quantized.py).
    deferred: the parameters stay on the meta device and base.weights streams them later (FSDP,
    sharded_load.py), so each rank only ever holds its own shard of them."""
    from accelerate import init_empty_weights
    from accelerate.utils import set_module_tensor_to_device
    from gguf import dequantize
    from transformers import AutoConfig, AutoModelForCausalLM
    from transformers.modeling_gguf_pytorch_utils import TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map

    reader = open_gguf(path)
    architecture = str(_field(reader, "general.architecture"))
    raw_config = _transformers_config(reader, path)
    _complete_config(raw_config, reader, architecture)
    fields = dict(raw_config)
    config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    _complete_built_config(config, reader, architecture)
    with init_empty_weights():  # parameters on the meta device, buffers (RoPE tables) real
        model = AutoModelForCausalLM.from_config(config, attn_implementation=attention, dtype=dtype)
    processor = TENSOR_PROCESSORS.get(architecture, TensorProcessor)(config=raw_config)
    present = {t.name for t in reader.tensors}
    gguf_to_hf = {k: v for k, v in get_gguf_hf_weights_map(model, processor).items() if k in present}
    buffers = dict(model.named_buffers())
    for name in present:  # per-layer output scales are buffers transformers' map does not name (Gemma 4)
        if name.endswith(".layer_output_scale.weight"):
            layer = name.split(".")[1]
            gguf_to_hf.setdefault(name, next((b for b in buffers if b.endswith(f"layers.{layer}.layer_scalar")), name))

    kept = _quantized_projections(model, reader, gguf_to_hf, device) if keep_quantized else {}
    tables, tied_heads = _quantized_tables(model, reader, gguf_to_hf, device, dtype) if keep_quantized else ({}, {})
    kept_blocks = {**kept, **tables}
    total = sum(4 * int(t.n_elements) for t in reader.tensors)
    expected = {**dict(model.named_parameters()), **buffers}

    def stream(place: Callable[[str, torch.Tensor, Optional[torch.dtype]], None]) -> None:
        """Reads every tensor of the file in turn and hands it to place(hf_name, value, dtype)."""
        loaded = 0
        for tensor in reader.tensors:
            hf_name = gguf_to_hf.get(tensor.name)
            layer = kept_blocks.get(tensor.name)
            if layer is not None:
                blocks = torch.from_numpy(np.array(tensor.data, dtype=np.uint8)).reshape(layer.rows, -1)
                order = _row_order(processor, tensor.name, layer.rows, gguf_to_hf)
                if order is None:
                    raise ValueError(f"tensor {tensor.name}: transformers changes more than its row order, so it cannot stay quantised")
                if not np.array_equal(order, np.arange(layer.rows)):
                    blocks = blocks[torch.from_numpy(order)]
                layer.qweight = blocks.contiguous().to(device)
                if tensor.name in tied_heads:
                    tied_heads[tensor.name].qweight = layer.qweight
                del blocks
            elif hf_name is not None and hf_name in expected and _in_slices(tensor, expected[hf_name], hf_name in buffers):
                value = _dequantized_in_slices(tensor, processor, gguf_to_hf, dtype)
                place(hf_name, value, dtype)
                del value
            elif hf_name is not None and hf_name in expected:
                weights = processor.process(
                    weights=dequantize(tensor.data, tensor.tensor_type), name=tensor.name, tensor_key_mapping=gguf_to_hf, parsed_parameters={}
                ).weights
                want = tuple(expected[hf_name].shape)
                if int(np.prod(weights.shape)) != int(np.prod(want)) or (hf_name not in buffers and tuple(weights.shape) != want):
                    raise ValueError(f"tensor {tensor.name} has shape {list(weights.shape)}, expected {list(want)} for {hf_name}")
                value = torch.from_numpy(np.ascontiguousarray(weights, dtype=np.float32)).reshape(want)
                place(hf_name, value, dtype if hf_name not in buffers else None)
                del weights, value
            _drop_pages(reader, tensor)
            loaded += 4 * int(tensor.n_elements)
            on_tensor(tensor.name, loaded, total)

    factors = _rope_factors(reader) if architecture in ("llama", "qwen2", "qwen3") else None

    def finish(target: torch.nn.Module) -> None:
        """What follows the tensors: the tied head, RoPE scaling from the file."""
        if not tied_heads:  # a kept table and the head tied to it already share their blocks
            target.tie_weights()
        if factors is not None:
            _apply_rope_factors(target, factors)

    weights = None
    if deferred:
        from .sharded_load import DeferredWeights

        weights = DeferredWeights(model, stream, finish, unread=_shared_kv_names(model, config))
    else:
        stream(lambda name, value, as_dtype: set_module_tensor_to_device(model, name, device, value=value, dtype=as_dtype))
        if not tied_heads:
            model.tie_weights()
        _fill_shared_kv(model, config, device, dtype)
        missing = [name for name, p in model.named_parameters() if p.device.type == "meta"]
        if missing:
            raise ValueError(f"GGUF {path} is missing tensor for {missing[0]}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        for buffer_name, buffer in model.named_buffers():
            if buffer.device != device:
                set_module_tensor_to_device(model, buffer_name, device, value=buffer)
        if factors is not None:
            _apply_rope_factors(model, factors)
    model.requires_grad_(False)
    model.eval()
    parameters = sum(p.numel() for p in model.parameters()) + sum(layer.in_features * layer.out_features for layer in kept.values())
    parameters += sum(int(t.n_elements) for t in reader.tensors if t.name in tables)

    permuted: Dict[str, int] = {}
    if processor.__class__.__name__ == "LlamaTensorProcessor":
        heads, kv_heads = int(raw_config["num_attention_heads"]), int(raw_config["num_key_value_heads"])
        for name in gguf_to_hf:
            if ".attn_q." in name:
                permuted[name] = heads
            elif ".attn_k." in name:
                permuted[name] = kv_heads
    return GgufBase(
        model,
        architecture,
        gguf_to_hf,
        permuted,
        parameters,
        {name: QUANT_NAMES[layer.ggml_type] for name, layer in kept.items()},
        {name: QUANT_NAMES[layer.ggml_type] for name, layer in tables.items()},
        weights,
    )


def hf_rows(t: torch.Tensor, heads: int) -> torch.Tensor:
    """GGUF row order -> transformers' for a permuted projection (undoes convert_hf_to_gguf's permute)."""
    return t.reshape(heads, t.shape[0] // heads // 2, 2, *t.shape[1:]).transpose(1, 2).reshape(t.shape)


def gguf_rows(t: torch.Tensor, heads: int) -> torch.Tensor:
    """transformers' row order -> GGUF's (convert_hf_to_gguf's permute)."""
    return t.reshape(heads, 2, t.shape[0] // heads // 2, *t.shape[1:]).transpose(1, 2).reshape(t.shape)
