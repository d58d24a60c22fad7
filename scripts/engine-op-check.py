#!/usr/bin/env python3
"""kiln-engine's first layer, op by op, against float64 NumPy fed kiln's own inputs: separates
the kernels' own error (f32 rounding: ~1e-7 relative) from the spread that quantization adds
downstream (a last-bit difference upstream flips a Q8 rounding, which moves a GEMV output by a
whole quant step: ~1e-3 relative after one layer, ~0.3 logits after 30).

  python3 scripts/engine-op-check.py models/SmolLM2-135M-Instruct.Q8_0.gguf dist

Cuts the model to its first layer (gguf package), runs one token through kiln's graph on the cpu
device (`cargo run -p kiln-engine --example logits`, KILN_DUMP), and compares.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGUFValueType as V

model, package = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp()
cut = os.path.join(tmp, "cut1.gguf")
r = gguf.GGUFReader(model)
w = gguf.GGUFWriter(cut, "llama")
for key, f in r.fields.items():
    if key.startswith("GGUF.") or key == "general.architecture":
        continue
    val = 1 if key == "llama.block_count" else f.contents()
    w.add_key_value(key, val, f.types[0], f.types[1] if f.types[0] == V.ARRAY else None)
for t in r.tensors:
    if t.name.startswith("blk.") and t.name.split(".")[1] != "0":
        continue
    w.add_tensor(t.name, np.array(t.data), raw_shape=t.data.shape, raw_dtype=t.tensor_type)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
tok = 1
subprocess.run(["cargo", "run", "-q", "-p", "kiln-engine", "--example", "logits", "--", cut, package,
                os.path.join(tmp, "logits.f32"), "1", str(tok)], check=True, env={**os.environ, "KILN_DUMP": tmp})

sys.argv = [sys.argv[0], cut, "1", os.path.join(tmp, "unused.json")]
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine-numpy-ref.py")).read()
exec(src[: src.index("res = {")])  # the twin's definitions, not its run


def ld(n, cnt):
    return np.fromfile(os.path.join(tmp, n + ".f32"), dtype=np.float32)[:cnt].astype(np.float64).reshape(1, cnt)


def cmp(name, want, got):
    d = np.abs(want - got)
    rel = d.max() / np.abs(want).max()
    print(f"{name:34s} max |diff| {d.max():.3e}, relative to the largest value {rel:.1e}")
    return rel


l = layers[0]
x = emb_f[tok].reshape(1, H)
att_k, h_k, f_k, x_k = ld("att", H), ld("h", H), ld("f", 1536), ld("x", H)
print("op by op, from kiln's inputs (the kernels' own error):")
worst = max(
    cmp("output projection + residual", x + l["o"](att_k), h_k),
    cmp("ffn norm, gate/up, SwiGLU", (lambda g, u: g / (1 + np.exp(-g)) * u)(
        *(lambda xn: (l["g"](xn), l["u"](xn)))(rmsnorm(h_k, l["fn"]).astype(np.float32))), f_k),
    cmp("down projection + residual", h_k + l["dn"](f_k), x_k),
)
print("chained from the embedding (quantization spreads last-bit differences):")
xn = rmsnorm(x, l["an"])
v = l["v"](xn).reshape(NKV, D)
att = np.repeat(q8_roundtrip(v.astype(np.float32)), NH // NKV, axis=0).reshape(1, H)
cmp("attention output (position 0: V)", att, att_k)
h1 = x + l["o"](att)
g, u = l["g"](rmsnorm(h1, l["fn"])), l["u"](rmsnorm(h1, l["fn"]))
cmp("layer output", h1 + l["dn"](g / (1 + np.exp(-g)) * u), x_k)
sys.exit(0 if worst < 1e-5 else 1)
