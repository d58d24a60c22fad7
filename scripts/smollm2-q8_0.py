#!/usr/bin/env python3
"""SmolLM2 Q4_1 GGUF -> Q8_0 GGUF with the PyPI package `gguf` (every Q4_1 tensor dequantized
and re-quantized to Q8_0; F32 and Q8_0 tensors copied; the same metadata but
general.file_type = 7, MOSTLY_Q8_0). Usage: smollm2-q8_0.py SRC.gguf DST.gguf
(scripts/fetch-smollm2.sh calls it; so does the GPU script, where nothing can be downloaded)."""
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

src, dst = sys.argv[1], sys.argv[2]
r = gguf.GGUFReader(src)
arch = r.fields["general.architecture"].contents()
w = gguf.GGUFWriter(dst, arch)
for key, f in r.fields.items():
    if key.startswith("GGUF.") or key == "general.architecture":
        continue
    val = f.contents()
    if key == "general.file_type":
        val = int(gguf.LlamaFileType.MOSTLY_Q8_0)
    vtype = f.types[0]
    sub = f.types[1] if vtype == V.ARRAY else None
    w.add_key_value(key, val, vtype, sub)
converted = 0
for t in r.tensors:
    # GGUF dims are innermost first; numpy shapes outermost first.
    shape = tuple(int(d) for d in reversed(t.shape.tolist()))
    if t.tensor_type == Q.Q4_1:
        x = gguf.quants.dequantize(t.data, Q.Q4_1).reshape(shape).astype(np.float32)
        q = gguf.quants.quantize(x, Q.Q8_0)
        w.add_tensor(t.name, q, raw_shape=q.shape, raw_dtype=Q.Q8_0)
        converted += 1
    elif t.tensor_type in (Q.Q8_0, Q.F32):
        w.add_tensor(t.name, np.array(t.data), raw_shape=t.data.shape, raw_dtype=t.tensor_type)
    else:
        sys.exit(f"{t.name}: unexpected tensor type {t.tensor_type.name}")
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print(f"{dst}: {converted} Q4_1 tensors re-quantized to Q8_0")
