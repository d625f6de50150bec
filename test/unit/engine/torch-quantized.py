"""
Checks of svc_torch/quantized.py for torch-quantized-base.test.ts, printed as one JSON line.

  dequant FILE...   every Q8_0 / Q4_K / Q6_K tensor of the GGUFs (blocks written by svc's port of
                    ggml's reference quantisers), and Q8_0 blocks of gguf-py's own quantiser:
                    svc's torch dequantiser and its native one (float32 and bfloat16, where
                    built) against gguf-py's numpy `dequantize`, bit for bit
  linear FILE       per quantised type in the file, one projection as QuantizedLinear and as an
                    nn.Linear holding its dequantised weight, each wrapped by PEFT LoRA: the
                    wrapper PEFT chose, the LoRA and input gradients of both, and the largest
                    tensor autograd saved in the quantised layer's forward
  slices FILE       the base loaded with its large tensors dequantised a slice of rows at a time
                    against the same load a whole tensor at a time
  loss              the vocabulary-sliced loss (a quantised head's), its first pass's logits kept
                    or recomputed, against cross-entropy on whole logits
"""

from __future__ import annotations

import json
import sys

import numpy as np
import torch
import torch.nn.functional as F
from gguf import GGMLQuantizationType, GGUFReader, dequantize, quantize

from svc_torch import native_dequant
from svc_torch.quantized import QUANT_TYPES, QuantizedLinear
from svc_torch.quantized import dequantize as torch_dequantize


def rows_and_width(tensor):
    width = int(tensor.shape[0])  # ne0: the row length
    return int(tensor.n_elements) // width, width


def check_dequant(files):
    checked, mismatches = {}, []

    native, native_status = native_dequant.load()

    def bits(values):
        return values.view(torch.int16 if values.dtype == torch.bfloat16 else torch.int32)

    def compare(label, qtype, blocks, rows, width):
        expected = torch.from_numpy(dequantize(blocks, qtype).reshape(rows, width).astype(np.float32))
        source = torch.from_numpy(np.ascontiguousarray(blocks))
        candidates = {"torch": torch_dequantize(source, int(qtype), (rows, width))}
        if native is not None:
            size, per_block, _ = QUANT_TYPES[int(qtype)]
            for dtype in (torch.float32, torch.bfloat16):
                out = torch.empty(rows * width, dtype=dtype)
                candidates[f"native {dtype}"] = native.dequantize(int(qtype), source, size, per_block, out).view(rows, width)
        name = GGMLQuantizationType(qtype).name
        checked[name] = checked.get(name, 0) + rows * width
        for which, got in candidates.items():
            # bfloat16: gguf-py's float32 rounded as torch rounds it.
            wanted = expected.to(got.dtype)
            count = int(torch.sum(bits(wanted) != bits(got)))
            if count:
                mismatches.append(f"{label} ({which}): {count} values differ")

    for path in files:
        for tensor in GGUFReader(path).tensors:
            if int(tensor.tensor_type) in QUANT_TYPES:
                rows, width = rows_and_width(tensor)
                compare(f"{path}:{tensor.name}", tensor.tensor_type, np.array(tensor.data), rows, width)
    rng = np.random.default_rng(7)
    values = (rng.standard_normal((96, 512)) * np.exp(rng.standard_normal((96, 1)))).astype(np.float32)
    values[3] = 0  # an all-zero block: d = 0
    compare("gguf-py Q8_0", GGMLQuantizationType.Q8_0, quantize(values, GGMLQuantizationType.Q8_0), 96, 512)
    return {"checked": checked, "mismatches": mismatches, "native": native_status}


def check_linear(path):
    from peft import LoraConfig, get_peft_model
    from peft.tuners.lora import Linear as LoraLinear

    results = {}
    seen = set()
    for tensor in GGUFReader(path).tensors:
        qtype = int(tensor.tensor_type)
        if qtype not in QUANT_TYPES or qtype in seen or not tensor.name.startswith("blk."):
            continue
        seen.add(qtype)
        rows, width = rows_and_width(tensor)
        blocks = torch.from_numpy(np.array(tensor.data)).reshape(rows, -1)
        weight = torch.from_numpy(dequantize(np.array(tensor.data), tensor.tensor_type).reshape(rows, width).astype(np.float32))

        def wrapped(layer, width=width):
            model = torch.nn.Sequential()  # a norm first: PEFT places the adapter by the model's first parameter
            model.add_module("norm", torch.nn.LayerNorm(width))
            model.add_module("proj", layer)
            model.requires_grad_(False)
            peft = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["proj"], lora_dropout=0.0))
            torch.manual_seed(3)
            for name, p in peft.named_parameters():
                if "lora_" in name:
                    with torch.no_grad():
                        p.copy_(torch.randn(p.shape) * 0.1)
            return peft

        plain = torch.nn.Linear(width, rows, bias=False)
        with torch.no_grad():
            plain.weight.copy_(weight)
        reference, kept = wrapped(plain), wrapped(QuantizedLinear(width, rows, qtype, blocks.clone()))
        x0 = torch.randn(3, 5, width, generator=torch.Generator().manual_seed(1))
        target = torch.randn(3, 5, rows, generator=torch.Generator().manual_seed(2))
        grads = []
        saved = []
        for model in (reference, kept):
            x = x0.clone().requires_grad_(True)
            if model is kept:
                with torch.autograd.graph.saved_tensors_hooks(lambda t, saved=saved: saved.append(t.numel()) or t, lambda t: t):
                    y = model(x)
            else:
                y = model(x)
            ((y - target) ** 2).mean().backward()
            named = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
            named["input"] = x.grad.clone()
            grads.append(named)
        worst = {}
        for name, expected in grads[0].items():
            scale = float(expected.abs().max())
            worst[name.split(".")[-3] if "lora_" in name else name] = float((grads[1][name] - expected).abs().max()) / scale
        layer = kept.base_model.model.proj
        checkpointed = {}
        for saving in (False, True):
            # Under activation checkpointing the layer may keep its dequantised weight from the
            # recomputed forward for its backward: the same gradients, one dequantisation fewer.
            layer.base_layer.save_weight_for_backward = saving
            counted = {"n": 0}
            dequantized = layer.base_layer.dequantized

            def counting(dtype, pooled=False, dequantized=dequantized, counted=counted):
                counted["n"] += 1
                return dequantized(dtype, pooled)

            layer.base_layer.dequantized = counting
            kept.zero_grad()
            x = x0.clone().requires_grad_(True)
            y = torch.utils.checkpoint.checkpoint(kept, x, use_reentrant=False)
            ((y - target) ** 2).mean().backward()
            del layer.base_layer.dequantized
            layer.base_layer.save_weight_for_backward = False
            error = max(float((x.grad - grads[0]["input"]).abs().max()) / float(grads[0]["input"].abs().max()), 0.0)
            checkpointed["saving" if saving else "recomputing"] = {"dequantizations": counted["n"], "inputRelativeError": error}
        results[GGMLQuantizationType(qtype).name] = {
            "checkpointed": checkpointed,
            "tensor": tensor.name,
            "wrapper": f"{type(layer).__module__}.{type(layer).__name__}",
            "isLoraLinear": isinstance(layer, LoraLinear),
            "baseLayer": type(layer.base_layer).__name__,
            "loraDtype": str(layer.lora_A["default"].weight.dtype),
            "relativeError": worst,
            "weightElements": rows * width,
            "largestSaved": max(saved, default=0),
            "qweightBytes": int(layer.base_layer.qweight.numel()),
        }
    return results


def check_slices(path):
    """The base loaded with its large tensors dequantised a few rows at a time equals the whole-tensor load."""
    from svc_torch import gguf_base

    def load(slice_elements):
        gguf_base.SLICE_ELEMENTS = slice_elements
        base = gguf_base.load_gguf_base(path, torch.device("cpu"), torch.float32, "eager", lambda *_: None)
        return {name: p.detach().clone() for name, p in base.model.named_parameters()}

    whole, sliced = load(1 << 40), load(1000)
    differ = [name for name in whole if not torch.equal(whole[name], sliced[name])]
    return {"parameters": len(whole), "differ": differ}


def check_sliced_loss():
    """The loss of a head read a slice of vocabulary rows at a time (chunked_loss.py), with the first
    pass's logits kept for the gradient pass or recomputed, against cross-entropy on whole logits."""
    from svc_torch.chunked_loss import vocab_chunked_masked_loss_sum

    generator = torch.Generator().manual_seed(11)
    tokens, width, vocab, slice_rows = 37, 48, 10007, 3001
    weight = torch.randn(vocab, width, generator=generator) * 0.2
    targets = torch.randint(0, vocab, (tokens,), generator=generator)
    mask = (torch.rand(tokens, generator=generator) > 0.3).float()
    hidden0 = torch.randn(tokens, width, generator=generator)
    targets[:12] = (hidden0[:12] @ weight.T).argmax(dim=-1)  # some tokens predicted right, so accuracy is counted
    results = {}
    for softcap in (None, 3.0):
        runs = {}
        for name in ("whole", "recomputed", "kept"):
            hidden = hidden0.clone().requires_grad_(True)
            correct: list = []
            if name == "whole":
                raw = hidden @ weight.T
                logits = torch.tanh(raw / softcap) * softcap if softcap else raw
                correct.append(((logits.argmax(dim=-1) == targets) * mask).sum())
                loss = (F.cross_entropy(logits, targets, reduction="none") * mask).sum()
            else:
                rows_of = lambda start, stop, dtype: weight[start:stop].to(dtype)  # noqa: E731
                loss = vocab_chunked_masked_loss_sum(hidden, rows_of, vocab, targets, mask, softcap, slice_rows, correct, keep_logits=name == "kept")
            loss.backward()
            runs[name] = (float(loss.detach()), hidden.grad, int(sum(c.item() for c in correct)))
        whole = runs["whole"]
        results[f"softcap {softcap}"] = {
            name: {
                "lossError": abs(run[0] - whole[0]) / abs(whole[0]),
                "gradError": float((run[1] - whole[1]).abs().max() / whole[1].abs().max()),
                "correct": [run[2], whole[2]],
                "sameAsRecomputed": run[0] == runs["recomputed"][0] and torch.equal(run[1], runs["recomputed"][1]),
            }
            for name, run in runs.items()
            if name != "whole"
        }
    return results


def main():
    mode, files = sys.argv[1], sys.argv[2:]
    checks = {
        "dequant": lambda: check_dequant(files),
        "linear": lambda: check_linear(files[0]),
        "slices": lambda: check_slices(files[0]),
        "loss": check_sliced_loss,
    }
    out = checks[mode]()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
