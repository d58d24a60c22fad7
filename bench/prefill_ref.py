#!/usr/bin/env python3
"""Outside reference for prompt attention (issue 14): `attention_prefill_*` through `kiln run`
(the interpreter by default, or a GPU with --device/--arch), against float64 NumPy attention
over the cache DEQUANTIZED by the PyPI package `gguf` (Q8_0 bytes by `gguf.quants.quantize`,
f16 by NumPy's `astype(float16)`).

Per family and shape, on fresh random data (seeded, printed): Q f16 [L][n_q][D], K/V cache
[kv][ctx_max][D] holding the prefix and the chunk, `pos` the chunk's first position; every
output must satisfy

    |out - ref| <= (2^-9 + 2^-10 * mag) * max|v|

with `mag = max_k scale * sum_d |q_d k_d|` of its row and `max|v|` over the case's V values.
Why (docs/prefill.md): the weights P enter the matrix unit as f16 (2^-11 relative each),
Q8_0 values as f16(q * d) (2^-11 relative, moving a score by at most 2^-11 mag and a weight by
twice that), the f32 sums far less; the output, a convex combination of V rows, moves by the
weights' relative error times max|v|; a factor 2 kept. It prints how much of the bound is used.

`--io qbf16` runs the `_qbf16` families (Q in bf16, by `gguf.quants.quantize(.., BF16)`; the
reference takes its values, which enter the kernel exactly as f16 in this range), `--io of16`
the `_of16` families (out in f16: the bound adds half an f16 ulp, 2^-11 max|v|).

Usage (from the repository root, after `cargo build -p kiln`):
    ./target/debug/kiln build --arch gfx1100 --kernel attention_prefill_q8_0_d64,\
attention_prefill_q8_0_d128,attention_prefill_f16_d64,attention_prefill_f16_d128 -o target/dist-prefill
    python3 bench/prefill_ref.py --package target/dist-prefill [--device cuda --arch sm_90] [--large]
(`--arch gfx942` or `gfx906` for wave 64 on the interpreter; --large adds L = 4096 + 5; the
`_qbf16` / `_of16` families need their names in the package's `--kernel` list.)
Needs `pip install gguf numpy`. Exits non-zero on the first failed check.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from gguf.constants import GGMLQuantizationType as GT
from gguf.quants import dequantize, quantize


def run(args, tmp, n, kernel, arrays, scalars, variant=None):
    d = os.path.join(tmp, f"call{n}")
    os.makedirs(d)
    cmd = [args.kiln, "run", kernel, "--device", args.device, "--package", args.package,
           "--out", os.path.join(d, "out")]
    if args.arch:
        cmd += ["--arch", args.arch]
    if variant:
        cmd += ["--variant", variant]
    for name, a in arrays.items():
        f = os.path.join(d, f"{name}.npy")
        np.save(f, np.ascontiguousarray(a))
        cmd += ["--arg", f"{name}={f}"]
    for name, v in scalars.items():
        cmd += ["--shape", f"{name}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"kiln run failed: {' '.join(cmd)}\n{r.stderr}")
    outd = os.path.join(d, "out")
    return {f[:-4]: np.load(os.path.join(outd, f)) for f in os.listdir(outd)}


def reference(q, kd, vd, pos, l, kv, g, ctx, scale):
    """float64 causal attention and the bound, q [L][nq][D], kd/vd [kv][ctx][D]."""
    nq, d = kv * g, q.shape[-1]
    q64 = q.astype(np.float64)
    want = np.zeros((l, nq, d))
    tol = np.zeros((l, nq, d))
    vmax = np.abs(vd).max()
    for h in range(kv):
        kk = kd[h].astype(np.float64)
        vv = vd[h].astype(np.float64)
        for j in range(g):
            qh = h * g + j
            qs = q64[:, qh]  # L x D
            s = scale * (qs @ kk.T)  # L x ctx
            mag = scale * (np.abs(qs) @ np.abs(kk).T)
            keys = np.minimum(pos + np.arange(l) + 1, ctx)
            mask = np.arange(ctx)[None, :] < keys[:, None]
            s = np.where(mask, s, -np.inf)
            w = np.exp(s - s.max(axis=1, keepdims=True))
            want[:, qh] = (w @ vv) / w.sum(axis=1, keepdims=True)
            m = np.where(mask, mag, 0).max(axis=1)
            tol[:, qh] = ((2.0**-9 + 2.0**-10 * m) * vmax)[:, None]
    return want, tol


# The variants the `_qbf16` and `_of16` families build (docs/prefill.md): the routed wide one.
NOT_BUILT = {"f16": {"pipe", "w4qs"}, "q8_0": {"pipe", "w4g"}}
# Variants built for f16 caches only (async copies land the rows as they are), and for Q8_0 only
# (`w4qsxc`: 128 registers on sm_90, where an f16 cache spills).
F16_ONLY = {"w4gxa"}
Q8_ONLY = {"w4qsxc"}


def check(args, tmp, n, rng, cache, d, shape, variants):
    pos, l, kv, g, ctx = shape
    scale = np.float32(1.0 / np.sqrt(d))
    if args.io == "qbf16":
        qb = quantize(rng.standard_normal((l * kv * g, d)).astype(np.float32), GT.BF16)
        q = dequantize(qb, GT.BF16).reshape(l, kv * g, d)
        q_arg = qb.reshape(-1).view(np.uint16)
    else:
        q = rng.standard_normal((l, kv * g, d)).astype(np.float16)
        q_arg = q
    kx = rng.standard_normal((kv * ctx, d)).astype(np.float32)
    vx = rng.standard_normal((kv * ctx, d)).astype(np.float32)
    if cache == "q8_0":
        kb, vb = quantize(kx, GT.Q8_0), quantize(vx, GT.Q8_0)
        kd, vd = dequantize(kb, GT.Q8_0), dequantize(vb, GT.Q8_0)
        kc, vc = kb.reshape(-1), vb.reshape(-1)
    else:
        kc, vc = kx.astype(np.float16).reshape(-1), vx.astype(np.float16).reshape(-1)
        kd, vd = kc.astype(np.float32), vc.astype(np.float32)
    kd, vd = kd.reshape(kv, ctx, d), vd.reshape(kv, ctx, d)
    want, tol = reference(q, kd, vd, pos, l, kv, g, ctx, float(scale))
    if args.io == "of16":
        tol = tol + 2.0**-11 * np.abs(vd).max()
    sc = dict(pos=pos, n_tokens=l, n_kv_heads=kv, group=g, ctx_max=ctx,
              scale=repr(float(scale)))
    fam = f"attention_prefill_{cache}_d{d}" + ("" if args.io == "f16" else f"_{args.io}")
    for v in variants:
        if v == "m32" and d > 64:
            continue  # m32 exists at head dim 64 only (M32_MAX_D in specs/src/attention/prefill)
        if args.io != "f16" and v in NOT_BUILT[cache]:
            continue
        if cache != "f16" and v in F16_ONLY:
            continue
        if cache != "q8_0" and v in Q8_ONLY:
            continue
        n += 1
        got = run(args, tmp, n, fam, {"q": q_arg, "k_cache": kc, "v_cache": vc}, sc, v)["out"]
        got = got.reshape(want.shape).astype(np.float64)
        err = np.abs(got - want)
        ok = bool(np.isfinite(got).all() and (err <= tol).all())
        print(f"{'ok  ' if ok else 'FAIL'} {fam}/{v} pos={pos} L={l} kv={kv} group={g} "
              f"ctx_max={ctx}: max |out-ref| = {err.max():.3e}, "
              f"{float((err / tol).max()):.3f} of the bound")
        if not ok:
            sys.exit(1)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", default="./target/debug/kiln")
    ap.add_argument("--package", default="dist")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--arch", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--variants", default="baseline,w4g,w4qs,pipe,m32")
    ap.add_argument("--io", choices=["f16", "qbf16", "of16"], default="f16",
                    help="the families' Q / out types: Q f16 out f32, Q bf16, or out f16")
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--caches", default="f16,q8_0", help="the K/V caches to check, in order")
    ap.add_argument("--dims", default="64,128", help="the head dims to check, in order")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"prefill_ref: seed {seed}")
    rng = np.random.default_rng(seed)
    # (pos, L, n_kv, group, ctx_max)
    shapes = [(0, 1, 8, 4, 1), (13, 1, 3, 3, 20), (0, 17, 3, 3, 17), (9, 17, 8, 4, 40),
              (2, 512, 1, 1, 514)]
    if args.large:
        shapes.append((0, 4096 + 5, 8, 4, 4096 + 5))
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for cache in args.caches.split(","):
            for d in map(int, args.dims.split(",")):
                for s in shapes:
                    n = check(args, tmp, n, rng, cache, d, s, args.variants.split(","))
    print("prefill_ref: every output within its bound")


if __name__ == "__main__":
    main()
