"""
Masked cross-entropy of a large-vocabulary output projection without ever holding [tokens, vocab]
logits for the backward pass. The forward pass goes a slice of tokens at a time: logits, the
slice's loss, and at once the slice's gradient with respect to its hidden states,
((softmax - onehot) · mask) · W, which is only [slice, d]. The backward pass then just scales those
saved gradients. Two matmuls with W per token, as plain autograd does, but the peak is one slice's
logits instead of the logits, their softmax and their gradient for the whole batch.
The output weight is frozen (LoRA), so no gradient for it is computed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


class ChunkedMaskedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, rows: int, correct: list) -> torch.Tensor:
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        grad_hidden = torch.empty(hidden.shape, dtype=torch.float32, device=hidden.device)
        for first in range(0, hidden.shape[0], rows):
            part = slice(first, first + rows)
            logits = F.linear(hidden[part].to(weight.dtype), weight).float()
            log_probs = torch.log_softmax(logits, dim=-1)
            picked = log_probs.gather(1, targets[part].unsqueeze(1)).squeeze(1)
            total += -(picked * mask[part]).sum()
            correct.append(((logits.argmax(dim=-1) == targets[part]) * mask[part]).sum())
            # d(loss)/d(logits) = (softmax - onehot) · mask, reusing log_probs' memory.
            probs = log_probs.exp_()
            probs[torch.arange(probs.shape[0], device=probs.device), targets[part]] -= 1
            probs *= mask[part].unsqueeze(1)
            grad_hidden[part] = (probs.to(weight.dtype) @ weight).float()
            del logits, log_probs, probs
        ctx.save_for_backward(grad_hidden)
        ctx.hidden_dtype = hidden.dtype
        return total

    @staticmethod
    def backward(ctx, grad_total: torch.Tensor):
        (grad_hidden,) = ctx.saved_tensors
        return (grad_hidden * grad_total).to(ctx.hidden_dtype), None, None, None, None, None


def chunked_masked_loss_sum(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, rows: int, correct: list) -> torch.Tensor:
    """hidden [N, d], weight [vocab, d] (frozen), targets [N] int64, mask [N] float32 -> summed loss;
    appends each slice's count of masked tokens whose argmax is the target to `correct`."""
    return ChunkedMaskedCrossEntropy.apply(hidden, weight, targets, mask, rows, correct)
