"""
The LoRA matrices being trained, in the seam's (PEFT) layout, which is also torch's Linear layout:
A [r, in], B [out, r], float32, keyed `blk.N.<proj>.weight.lora_a|lora_b`. The update to a
projection's output is x · Aᵀ · Bᵀ · (alpha / r).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np
import torch

PROJECTIONS = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")


class Lora:
    def __init__(self, r: int, alpha: float, targets: List[str], tensors: Dict[str, np.ndarray], device: torch.device):
        unknown = [t for t in targets if t not in PROJECTIONS]
        if unknown:
            raise ValueError(f"unknown LoRA targets {unknown} (expected some of {', '.join(PROJECTIONS)})")
        self.r = r
        self.alpha = alpha
        self.targets = list(targets)
        self.scaling = alpha / r
        self.params: Dict[str, torch.Tensor] = {}
        for name, array in tensors.items():
            t = torch.tensor(np.asarray(array, dtype=np.float32), dtype=torch.float32, device=device)
            self.params[name] = t.requires_grad_(True)

    def pair(self, block: int, projection: str) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
        a = self.params.get(f"blk.{block}.{projection}.weight.lora_a")
        b = self.params.get(f"blk.{block}.{projection}.weight.lora_b")
        return (a, b) if a is not None and b is not None else None

    def to_numpy(self) -> Dict[str, np.ndarray]:
        return {name: p.detach().float().cpu().numpy() for name, p in self.params.items()}
