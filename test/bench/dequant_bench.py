"""
Dequantising one Qwen3-4B-sized weight (9728 x 2560) to bfloat16, per block type, in one process:
torch's dequantisers (into a reused float32 buffer, then cast), the native kernel into a new tensor,
and the native kernel into a reused buffer (what a layer gets from the pool). Blocks are random
bytes with valid float16 scales. Prints one JSON line: milliseconds (best of ROUNDS) per type.
"""

from __future__ import annotations

import json
import sys
import time

import torch

from svc_torch import native_dequant
from svc_torch.quantized import QUANT_TYPES, _Scratch, dequantize

ROWS, WIDTH, ROUNDS = 9728, 2560, 7
# Block layouts: (name, ggml type, byte offsets of the float16 scales in a block).
TYPES = [("Q8_0", 8, [0]), ("Q4_K", 12, [0, 2]), ("Q6_K", 14, [208])]


def random_blocks(ggml_type: int, scale_offsets: list) -> torch.Tensor:
    size, per_block, _ = QUANT_TYPES[ggml_type]
    count = ROWS * WIDTH // per_block
    blocks = torch.randint(0, 256, (count, size), dtype=torch.uint8, generator=torch.Generator().manual_seed(ggml_type))
    for offset in scale_offsets:
        blocks[:, offset : offset + 2] = (
            (torch.rand(count, generator=torch.Generator().manual_seed(offset)) * 0.01).to(torch.float16).view(torch.uint8).reshape(count, 2)
        )
    return blocks


def best_ms(fn) -> float:
    fn()
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def measure(native, ggml_type: int, scale_offsets: list) -> dict:
    blocks = random_blocks(ggml_type, scale_offsets)
    size, per_block, _ = QUANT_TYPES[ggml_type]
    elements = ROWS * WIDTH
    reused = torch.empty(elements, dtype=torch.bfloat16)
    x = torch.randn(256, WIDTH, dtype=torch.bfloat16)
    return {
        "torch": best_ms(lambda: dequantize(blocks, ggml_type, (ROWS, WIDTH), out=_Scratch.get(elements, blocks.device)).to(torch.bfloat16)),
        "nativeNew": best_ms(lambda: native.dequantize(ggml_type, blocks, size, per_block, torch.empty(elements, dtype=torch.bfloat16))),
        "nativeReused": best_ms(lambda: native.dequantize(ggml_type, blocks, size, per_block, reused)),
        "bf16Matmul256": best_ms(lambda: torch.nn.functional.linear(x, reused.view(ROWS, WIDTH))),
    }


def main() -> None:
    native, status = native_dequant.load()
    if native is None:
        print(json.dumps({"error": status}))
        sys.exit(1)
    results = {"threads": torch.get_num_threads(), "native": status}
    for name, ggml_type, offsets in TYPES:
        results[name] = measure(native, ggml_type, offsets)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
