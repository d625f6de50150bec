"""
The masked next-token loss of a batch on the adapted transformers model, and the optimiser step:
torch.optim.AdamW over the LoRA parameters after global-norm clipping (clip_grad_norm_).
"""

from __future__ import annotations

import contextlib
from typing import Optional

import torch
import torch.nn.functional as F
from transformers.modeling_layers import GradientCheckpointingLayer

from .adapter import Adapter
from .chunked_loss import chunked_masked_loss_sum, vocab_chunked_masked_loss_sum
from .gguf_base import GgufBase
from .quantized import QuantizedLinear, release_weight


def _one_slice_at_a_time(head: QuantizedLinear):
    """head.dequantized_rows for the vocabulary-sliced loss, which is done with a slice before it asks
    for the next: each call hands the previous slice's memory back for this one."""
    previous: list = []

    def rows_of(start: int, stop: int, dtype: torch.dtype) -> torch.Tensor:
        while previous:
            release_weight(previous.pop())
        previous.append(head.dequantized_rows(start, stop, dtype, pooled=True))
        return previous[-1]

    return rows_of


class Trainer:
    LOGITS_CHUNK_BYTES = 256 << 20
    # Elements of a quantised head dequantised at once (a slice of its vocabulary rows).
    HEAD_SLICE_ELEMENTS = 1 << 24

    def __init__(self, base: GgufBase, adapter: Optional[Adapter], context_length: Optional[int]):
        self.base = base
        self.adapter = adapter
        model = adapter.model.get_base_model() if adapter is not None else base.model
        self.decoder, self.head = model.get_decoder(), model.get_output_embeddings()
        self.quantized_head = isinstance(self.head, QuantizedLinear)
        config = base.model.config
        self.softcap = getattr(config, "final_logit_softcapping", None) or None
        self.vocab = int(config.vocab_size)
        self.context_length = context_length
        self.optimizer: Optional[torch.optim.Optimizer] = None
        self.optimizer_key: Optional[tuple] = None
        self.checkpointing = False
        self.autocast = self._mixed_precision(model)

    @staticmethod
    def _mixed_precision(model: torch.nn.Module) -> Optional[torch.dtype]:
        """On CUDA with a bf16/fp16 base, the LoRA's matmuls run in the base's dtype under autocast while
        its weights (what AdamW updates) stay float32: PEFT would otherwise cast every projection's input
        up to float32 and multiply there, which on a GPU costs more than the frozen weights' own matmuls."""
        weight = next((p for p in model.parameters() if not p.requires_grad), None)
        if weight is None or weight.device.type != "cuda" or weight.dtype not in (torch.bfloat16, torch.float16):
            return None
        from peft.tuners.tuners_utils import BaseTunerLayer

        for module in model.modules():
            if isinstance(module, BaseTunerLayer):
                module.cast_input_dtype_enabled = False
        return weight.dtype

    def set_checkpointing(self, on: bool) -> None:
        """Recompute each layer's activations in the backward pass (transformers only does it in train mode)."""
        if on == self.checkpointing:
            return
        model = self.base.model
        if on:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.train()
        else:
            model.gradient_checkpointing_disable()
            model.eval()
        for module in self.decoder.modules():
            if isinstance(module, QuantizedLinear):
                module.save_weight_for_backward = False
        # Only projections inside a checkpointed layer: _QuantizedMatmul reuses the weight its first
        # forward saved, which is right only where checkpointing drops what that forward saves.
        for layer in self.decoder.modules():
            if on and isinstance(layer, GradientCheckpointingLayer) and layer.gradient_checkpointing:
                for module in layer.modules():
                    if isinstance(module, QuantizedLinear):
                        module.save_weight_for_backward = True
        self.checkpointing = on

    def hidden(self, ids: torch.Tensor) -> torch.Tensor:
        if self.context_length and ids.shape[1] > self.context_length:
            raise ValueError(f"sequence of {ids.shape[1]} tokens exceeds the context of {self.context_length}")
        mixed = torch.autocast("cuda", dtype=self.autocast) if self.autocast else contextlib.nullcontext()
        with mixed:
            return self.decoder(input_ids=ids, use_cache=False).last_hidden_state

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        weight = self.head.dequantized(hidden.dtype) if self.quantized_head else self.head.weight
        logits = F.linear(hidden.to(weight.dtype), weight).float()
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    def _chunk_loss(self, hidden: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, correct: list) -> torch.Tensor:
        logits = self.logits(hidden)
        # Token accuracy: masked tokens whose most likely next token is the target.
        correct.append(((logits.detach().argmax(dim=-1) == targets) * mask).sum())
        return (F.cross_entropy(logits, targets, reduction="none") * mask).sum()

    def loss_sum(self, inputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, int]:
        """Summed masked cross-entropy (float32) of next-token targets, and the masked tokens predicted right."""
        final = self.hidden(inputs)
        final = final.reshape(-1, final.shape[-1])
        targets, mask = targets.reshape(-1).long(), mask.reshape(-1)
        correct: list = []
        # A large vocabulary's logits dominate memory: above LOGITS_CHUNK_BYTES go a slice of tokens
        # at a time (chunked_loss.py). Softcapped heads take the plain path per slice.
        rows = max(1, self.LOGITS_CHUNK_BYTES // (4 * self.vocab))
        if self.quantized_head:  # never whole: a slice of its rows at a time, for every batch size
            head = self.head
            slice_rows = max(1, min(self.HEAD_SLICE_ELEMENTS // head.in_features, self.LOGITS_CHUNK_BYTES // (4 * final.shape[0])))
            keep_logits = 4 * final.shape[0] * head.out_features <= self.LOGITS_CHUNK_BYTES
            rows_of = _one_slice_at_a_time(head)
            total = vocab_chunked_masked_loss_sum(final, rows_of, head.out_features, targets, mask, self.softcap, slice_rows, correct, keep_logits)
        elif final.shape[0] <= rows:
            total = self._chunk_loss(final, targets, mask, correct)
        elif not (torch.is_grad_enabled() and final.requires_grad):
            with torch.no_grad():
                total = sum(self._chunk_loss(final[i : i + rows], targets[i : i + rows], mask[i : i + rows], correct) for i in range(0, final.shape[0], rows))
        elif self.softcap:
            total = sum(self._chunk_loss(final[i : i + rows], targets[i : i + rows], mask[i : i + rows], correct) for i in range(0, final.shape[0], rows))
        else:
            total = chunked_masked_loss_sum(final, self.head.weight, targets, mask, rows, correct)
        return total, int(round(float(sum(c.float() for c in correct))))

    def step(self, settings: dict) -> float:
        """Clips and applies the gradients now in the LoRA parameters; returns the norm before clipping."""
        params = self.adapter.trainable()
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        key = tuple(float(settings[k]) for k in ("beta1", "beta2", "epsilon", "weightDecay", "maxGradNorm"))
        # Moments persist across steps; other betas, epsilon, decay or clipping start a fresh optimiser.
        if self.optimizer is None or self.optimizer_key != key:
            beta1, beta2, eps, decay, _ = key
            self.optimizer = torch.optim.AdamW(params, lr=float(settings["learningRate"]), betas=(beta1, beta2), eps=eps, weight_decay=decay, foreach=True)
            self.optimizer_key = key
        max_norm = key[4]
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm if max_norm > 0 else float("inf"))
        for group in self.optimizer.param_groups:
            group["lr"] = float(settings["learningRate"])
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return float(norm)
