# gguf-py's numpy (de)quantisation, the reference for engine/gguf/{de,}quantize.ts.
# usage: gguf-numpy.py dequantize|quantize TYPE IN OUT
import sys
import warnings

import numpy as np
from gguf.constants import GGMLQuantizationType
from gguf.quants import dequantize, quantize

# F16 of values beyond 65504 overflows to inf on purpose (the test checks that edge).
warnings.simplefilter("ignore", RuntimeWarning)

mode, type_number, source, target = sys.argv[1:]
qtype = GGMLQuantizationType(int(type_number))
if mode == "dequantize":
    dequantize(np.fromfile(source, dtype=np.uint8).reshape(1, -1), qtype).astype(np.float32).tofile(target)
else:
    quantize(np.fromfile(source, dtype=np.float32).reshape(1, -1), qtype).tofile(target)
