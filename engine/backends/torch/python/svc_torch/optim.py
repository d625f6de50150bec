"""
AdamW exactly as engine/train/adamw.ts computes it, so both backends take the same steps:
global-norm clipping with scale maxGradNorm / (norm + 1e-6), bias correction folded into the step
size (lr · sqrt(1 - b2^t) / (1 - b1^t)), epsilon added to sqrt(v) without correction, and decoupled
weight decay lr · wd · param (the value before this step's update) on matrices only.
"""
from __future__ import annotations

import math
from typing import Dict, List

import torch


class AdamW:
    def __init__(self, beta1: float, beta2: float, epsilon: float, weight_decay: float, max_grad_norm: float):
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.weight_decay = weight_decay
        self.max_grad_norm = max_grad_norm
        self.step = 0
        self.m: Dict[str, torch.Tensor] = {}
        self.v: Dict[str, torch.Tensor] = {}

    def key(self) -> tuple:
        return (self.beta1, self.beta2, self.epsilon, self.weight_decay, self.max_grad_norm)

    @staticmethod
    def grad_norm(grads: List[torch.Tensor]) -> float:
        total = torch.zeros((), dtype=torch.float32, device=grads[0].device)
        for g in grads:
            total = total + g.float().square().sum()
        return float(total.sqrt())

    @torch.no_grad()
    def apply(self, params: Dict[str, torch.Tensor], learning_rate: float) -> float:
        """Updates params (whose .grad is set) in place; returns the norm before clipping."""
        self.step += 1
        names = list(params)
        norm = self.grad_norm([params[n].grad for n in names])
        clip = self.max_grad_norm / (norm + 1e-6) if self.max_grad_norm > 0 and norm > self.max_grad_norm else 1.0
        correction = math.sqrt(1 - self.beta2**self.step) / (1 - self.beta1**self.step)
        step_size = learning_rate * correction
        for name in names:
            param = params[name]
            g = param.grad if clip == 1.0 else param.grad * clip
            m = self.m.get(name)
            v = self.v.get(name)
            m = (torch.zeros_like(g) if m is None else m) * self.beta1 + g * (1 - self.beta1)
            v = (torch.zeros_like(g) if v is None else v) * self.beta2 + g.square() * (1 - self.beta2)
            update = m / (v.sqrt() + self.epsilon) * step_size
            if self.weight_decay > 0 and param.dim() >= 2:
                update = update + param * (learning_rate * self.weight_decay)
            param.sub_(update)
            self.m[name] = m
            self.v[name] = v
            param.grad = None
        return norm
