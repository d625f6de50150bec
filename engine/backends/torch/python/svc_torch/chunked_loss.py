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


class VocabChunkedCrossEntropy(torch.autograd.Function):
    """The same masked loss for a head that is never whole in memory (a quantised one: `rows_of(start,
    stop, dtype)` dequantises a slice of its vocabulary rows). Two passes over the vocabulary, each a
    slice of rows at a time: the first keeps a running log-sum-exp, the target's logit and the argmax;
    the second (only when a gradient is wanted) adds each slice's (softmax - onehot) · mask · W to the
    hidden states' gradient. A softcapped head (tanh(l / c) · c) scales that by 1 - tanh²."""

    @staticmethod
    def forward(ctx, hidden, rows_of, vocab: int, targets, mask, softcap, slice_rows: int, correct: list, keep_logits: bool):
        n = hidden.shape[0]
        device = hidden.device
        best = torch.full((n,), float("-inf"), device=device)
        sum_exp = torch.zeros(n, device=device)
        picked = torch.zeros(n, device=device)
        top = torch.full((n,), float("-inf"), device=device)
        top_index = torch.zeros(n, dtype=torch.long, device=device)
        at = torch.arange(n, device=device)

        def capped(raw):
            return torch.tanh(raw / softcap) * softcap if softcap else raw

        def slice_logits(start: int, stop: int):
            weight = rows_of(start, stop, hidden.dtype)
            raw = F.linear(hidden, weight).float()
            return weight, raw, capped(raw)

        # Where all the logits fit the budget, the second pass reuses the first's instead of
        # multiplying every slice again (it still needs each slice's weight for the gradient).
        kept_raw = [] if keep_logits and ctx.needs_input_grad[0] else None
        for start in range(0, vocab, slice_rows):
            stop = min(vocab, start + slice_rows)
            _, raw, logits = slice_logits(start, stop)
            if kept_raw is not None:
                kept_raw.append(raw)
            high, where = logits.max(dim=-1)
            better = high > top
            top, top_index = torch.where(better, high, top), torch.where(better, where + start, top_index)
            new_best = torch.maximum(best, high)
            sum_exp = sum_exp * torch.exp(best - new_best) + torch.exp(logits - new_best.unsqueeze(1)).sum(dim=-1)
            best = new_best
            inside = (targets >= start) & (targets < stop)
            picked = torch.where(inside, logits[at, (targets - start).clamp(0, stop - start - 1)], picked)
            del raw, logits
        log_total = best + torch.log(sum_exp)
        correct.append(((top_index == targets) * mask).sum())
        total = ((log_total - picked) * mask).sum()
        grad_hidden = None
        if ctx.needs_input_grad[0]:
            grad_hidden = torch.zeros(hidden.shape, dtype=torch.float32, device=device)
            for index, start in enumerate(range(0, vocab, slice_rows)):
                stop = min(vocab, start + slice_rows)
                if kept_raw is None:
                    weight, raw, logits = slice_logits(start, stop)
                else:
                    weight, raw = rows_of(start, stop, hidden.dtype), kept_raw[index]
                    kept_raw[index] = None
                    logits = capped(raw)
                probs = torch.exp(logits - log_total.unsqueeze(1))
                inside = (targets >= start) & (targets < stop)
                probs[at[inside], targets[inside] - start] -= 1
                if softcap:
                    probs *= 1 - torch.tanh(raw / softcap) ** 2
                probs *= mask.unsqueeze(1)
                grad_hidden += (probs.to(weight.dtype) @ weight).float()
                del weight, raw, logits, probs
        ctx.save_for_backward(grad_hidden if grad_hidden is not None else torch.empty(0))
        ctx.hidden_dtype = hidden.dtype
        return total

    @staticmethod
    def backward(ctx, grad_total: torch.Tensor):
        (grad_hidden,) = ctx.saved_tensors
        return (grad_hidden * grad_total).to(ctx.hidden_dtype), None, None, None, None, None, None, None, None


def vocab_chunked_masked_loss_sum(
    hidden, rows_of, vocab: int, targets, mask, softcap, slice_rows: int, correct: list, keep_logits: bool = False
) -> torch.Tensor:
    """hidden [N, d]; rows_of(start, stop, dtype) -> the head's rows [stop - start, d] (frozen; each
    slice is done with before the next is asked for, so rows_of may reuse its memory); targets [N]
    int64, mask [N] float32 -> summed loss; appends the count of masked tokens whose argmax is the target.
    keep_logits: hold the first pass's logits (N x vocab float32) for the gradient pass."""
    return VocabChunkedCrossEntropy.apply(hidden, rows_of, vocab, targets, mask, softcap, slice_rows, correct, keep_logits)
