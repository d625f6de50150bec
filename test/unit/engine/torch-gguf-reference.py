"""
Checks svc_torch.gguf against llama.cpp's own gguf-py (the reference; used here only, never at
runtime): writes a GGUF with gguf-py holding one tensor of each supported type (K-quant blocks are
random bytes with sane scales, since gguf-py cannot quantise to them), reads it back with both
readers, and prints one JSON line with the largest difference per tensor. Also reports the error
our reader gives for a type it does not support.

usage: python3 torch-gguf-reference.py <gguf-py dir> <svc python dir> <scratch dir>
"""
import json
import os
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
import numpy as np  # noqa: E402
import gguf  # noqa: E402
from gguf import quants  # noqa: E402
from gguf.constants import GGMLQuantizationType as T  # noqa: E402

from svc_torch.gguf import GgufFile  # noqa: E402

rng = np.random.default_rng(5)
path = os.path.join(sys.argv[3], "types.gguf")
writer = gguf.GGUFWriter(path, "llama")
values = rng.normal(0, 1, (3, 512)).astype(np.float32)

writer.add_tensor("f32", values)
writer.add_tensor("f16", values.astype(np.float16))
for name, qtype in (("bf16", T.BF16), ("q8_0", T.Q8_0), ("q4_0", T.Q4_0), ("q5_0", T.Q5_0)):
    writer.add_tensor(name, quants.quantize(values, qtype), raw_dtype=qtype)


def random_k_blocks(qtype, rows, cols, f16_fields):
    """Random block bytes whose f16 scale fields (byte offsets in f16_fields) hold small finite values."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, (rows * cols // block, size), dtype=np.uint8)
    for offset in f16_fields:
        scales = rng.uniform(0.001, 0.05, blocks.shape[0]).astype(np.float16)
        blocks[:, offset : offset + 2] = scales.view(np.uint8).reshape(-1, 2)
    return blocks.reshape(rows, -1)


k_types = {"q4_k": (T.Q4_K, [0, 2]), "q5_k": (T.Q5_K, [0, 2]), "q6_k": (T.Q6_K, [208])}
for name, (qtype, fields) in k_types.items():
    raw = random_k_blocks(qtype, 3, 512, fields)
    writer.add_tensor(name, raw, raw_dtype=qtype)

writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()

reference = {t.name: quants.dequantize(t.data, t.tensor_type).reshape(3, 512) for t in gguf.GGUFReader(path).tensors}
ours = GgufFile(path)
result = {"maxDiff": {}, "maxAbs": {}, "unsupported": None}
for name in reference:
    if name == "q5_0":
        try:
            ours.read(name)
        except ValueError as err:
            result["unsupported"] = str(err)
        continue
    got = ours.read(name)
    assert got.shape == (3, 512), (name, got.shape)
    result["maxDiff"][name] = float(np.abs(got - reference[name]).max())
    result["maxAbs"][name] = float(np.abs(reference[name]).max())
print(json.dumps(result))
