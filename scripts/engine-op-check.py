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
# A second run of 5 tokens for attention over several keys (its own dump folder).
tmp5 = tempfile.mkdtemp()
for d, ids in [(tmp, [tok]), (tmp5, [tok, 9690, 198, 2683, 359])]:
    subprocess.run(["cargo", "run", "-q", "-p", "kiln-engine", "--example", "logits", "--", cut, package,
                    os.path.join(d, "logits.f32"), "1"] + [str(i) for i in ids],
                   check=True, env={**os.environ, "KILN_DUMP": d})

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


def norm32(v, w):
    """kiln's RMSNorm in f32 (exact sqrt and division; the sum's order aside)."""
    v32 = v.astype(np.float32)
    r = np.float32(1) / np.sqrt(np.float32((v.astype(np.float64) ** 2).sum() / v.shape[1]) + np.float32(EPS), dtype=np.float32)
    return ((v32 * r).astype(np.float32) * w.astype(np.float32)).astype(np.float32)


def head_check():
    """Final norm and the tied LM head (gemv_q8_0 on the embedding's blocks) from kiln's x."""
    logits = np.fromfile(os.path.join(tmp, "logits.f32"), dtype=np.float32).astype(np.float64)
    return cmp("final norm + LM head (49152 rows)", emb(norm32(x_k, onorm))[0], logits)


def rope_check():
    """RoPE of Q at position 4 (normal pairs, base from the file), against float64."""
    q = np.fromfile(os.path.join(tmp5, "q.f32"), dtype=np.float32)[:H].astype(np.float64).reshape(NH, D)
    qr = np.fromfile(os.path.join(tmp5, "qr.f32"), dtype=np.float32)[:H].astype(np.float64).reshape(NH, D)
    # f32 RoPE's angle error grows with the position (docs/attention.md); tiny at 4.
    return cmp("RoPE of Q at position 4", rope(q, 4), qr)


def attention_check():
    """Position 4 of 5: kiln's rotated q against its own Q8_0 cache, softmax in float64."""
    qr = np.fromfile(os.path.join(tmp5, "qr.f32"), dtype=np.float32)[:H].astype(np.float64).reshape(NH, D)
    att = np.fromfile(os.path.join(tmp5, "att.f32"), dtype=np.float32)[:H].astype(np.float64).reshape(NH, D)
    ctx = 64  # the example's cache: the ids rounded up to 64
    def cache(name):
        b = np.fromfile(os.path.join(tmp5, name + ".q8_0"), dtype=np.uint8).reshape(NKV, ctx, D // 32, 34)
        d = b[..., :2].copy().view(np.float16).astype(np.float64)
        q = b[..., 2:].view(np.int8).astype(np.float64)
        return (q * d).reshape(NKV, ctx, D)[:, :5]
    kc, vc = cache("kc.0"), cache("vc.0")
    want = np.empty_like(att)
    for h in range(NH):
        s = kc[h // (NH // NKV)] @ qr[h] / np.sqrt(D)
        w = np.exp(s - s.max())
        want[h] = (w / w.sum()) @ vc[h // (NH // NKV)]
    return cmp("attention, 5 keys (kiln's q and cache)", want, att)


l = layers[0]
x = emb_f[tok].reshape(1, H)
att_k, h_k, f_k, x_k = ld("att", H), ld("h", H), ld("f", 1536), ld("x", H)
kvd = NKV * D
q_k, k_k, v_k = ld("q", H), ld("k", kvd), ld("v", kvd)
# The attention norm's output is not kept by the graph (its buffer is reused): computed here in
# f32 from the exact embedding row, as kiln's kernel does (a different rounding would flip a
# quant now and then, which shows as ~1e-4).
xn32 = norm32(x, l["an"])
print("op by op, from kiln's inputs (the kernels' own error):")
worst = max(
    cmp("attention norm + Q projection", l["q"](xn32), q_k),
    cmp("attention norm + K projection", l["k"](xn32), k_k),
    cmp("attention norm + V projection", l["v"](xn32), v_k),
    cmp("output projection + residual", x + l["o"](att_k), h_k),
    cmp("ffn norm, gate/up, SwiGLU", (lambda g, u: g / (1 + np.exp(-g)) * u)(
        *(lambda xn: (l["g"](xn), l["u"](xn)))(rmsnorm(h_k, l["fn"]).astype(np.float32))), f_k),
    cmp("down projection + residual", h_k + l["dn"](f_k), x_k),
    rope_check(),
    attention_check(),
    head_check(),
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
