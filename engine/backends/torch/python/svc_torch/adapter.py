"""
The LoRA being trained, as a PEFT adapter on the transformers model, and its translation to and
from the seam's layout (PROTOCOL.md): tensors keyed by GGUF names, `blk.N.<proj>.weight.lora_a`
[r, in] and `.lora_b` [out, r], float32, rows in the GGUF's order. PEFT's lora_A / lora_B have the
same shapes; only a llama q/k projection's B rows differ in order (llama.cpp permuted them).
"""

from __future__ import annotations

from typing import Dict, List

import numpy as np
import torch

from .gguf_base import GgufBase, gguf_rows, hf_rows

SEAM_PARTS = {"lora_a": "lora_A", "lora_b": "lora_B"}


class Adapter:
    def __init__(self, base: GgufBase, r: int, alpha: float, targets: List[str], tensors: Dict[str, np.ndarray], device: torch.device):
        from peft import LoraConfig, get_peft_model

        modules = self._target_modules(base, targets)
        config = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, bias="none", target_modules=modules)
        # PEFT keeps the adapter in float32 whatever the base's dtype (autocast_adapter_dtype).
        self.model = get_peft_model(base.model, config)
        self.base = base
        self.params: Dict[str, torch.Tensor] = {}  # seam name -> PEFT parameter
        self.initial: Dict[str, torch.Tensor] = {}  # seam name -> its initial value, in transformers' row order
        peft_params = dict(self.model.named_parameters())
        for seam_name, array in tensors.items():
            param = peft_params.get(self._peft_name(seam_name))
            if param is None:
                raise ValueError(f"LoRA tensor {seam_name} matches no projection of this {base.architecture} model")
            value = torch.from_numpy(np.asarray(array, dtype=np.float32))
            if tuple(value.shape) != tuple(param.shape):
                raise ValueError(f"LoRA tensor {seam_name} has shape {list(value.shape)}, expected {list(param.shape)}")
            self.initial[seam_name] = self._to_hf(seam_name, value)
            self.params[seam_name] = param
        given = {id(p) for p in self.params.values()}
        unset = [n for n, p in peft_params.items() if p.requires_grad and id(p) not in given]
        if unset:
            raise ValueError(f"no initial value given for {len(unset)} LoRA tensors, e.g. {unset[0]}")
        if not any(p.is_meta for p in self.params.values()):
            self.set_initial()

    def set_initial(self) -> None:
        """Gives the LoRA its initial values (again after the model moved off the meta device: sharded_load.py)."""
        peft_params = dict(self.model.named_parameters())
        for seam_name, value in self.initial.items():
            param = peft_params[self._peft_name(seam_name)]
            with torch.no_grad():
                param.copy_(value.to(param.device, param.dtype))
            self.params[seam_name] = param

    @staticmethod
    def _target_modules(base: GgufBase, targets: List[str]) -> List[str]:
        """Full module paths of the projections named by their GGUF names (attn_q, ffn_down...)."""
        modules = []
        for gguf_name, hf_name in base.gguf_to_hf.items():
            parts = gguf_name.split(".")
            if len(parts) == 4 and parts[0] == "blk" and parts[2] in targets and parts[3] == "weight":
                modules.append(hf_name[: -len(".weight")])
        if not modules:
            raise ValueError(f"none of the LoRA targets {', '.join(targets)} exists in this {base.architecture} model")
        return modules

    def _peft_name(self, seam_name: str) -> str:
        gguf_weight, part = seam_name.rsplit(".", 1)
        hf_name = self.base.gguf_to_hf.get(gguf_weight)
        if hf_name is None or part not in SEAM_PARTS:
            return ""
        return f"base_model.model.{hf_name[: -len('.weight')]}.{SEAM_PARTS[part]}.default.weight"

    def _to_hf(self, seam_name: str, t: torch.Tensor) -> torch.Tensor:
        heads = self.base.permuted_rows.get(seam_name.rsplit(".", 1)[0])
        return hf_rows(t, heads) if heads and seam_name.endswith("lora_b") else t

    def _to_seam(self, seam_name: str, t: torch.Tensor) -> torch.Tensor:
        heads = self.base.permuted_rows.get(seam_name.rsplit(".", 1)[0])
        return gguf_rows(t, heads) if heads and seam_name.endswith("lora_b") else t

    def trainable(self) -> List[torch.Tensor]:
        return list(self.params.values())

    def to_numpy(self) -> Dict[str, np.ndarray]:
        return {name: self._to_seam(name, p.detach().float().cpu()).numpy() for name, p in self.params.items()}

    def grads_to_numpy(self) -> Dict[str, np.ndarray]:
        out = {}
        for name, p in self.params.items():
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            out[name] = self._to_seam(name, g.detach().float().cpu()).numpy()
        return out
