#!/usr/bin/env python3
"""Outside reference for decode attention (issue 13): kiln's kernels on the interpreter (or a
GPU) through `kiln run`, against the PyPI package `gguf` (Q8_0 bytes) and float64 NumPy.

Checks, on fresh random data (seeded):
1. `kv_append_q8_0`'s V blocks are byte for byte `gguf.quants.quantize(V, Q8_0)`; its K blocks
   are `quantize(rope_f32(K))` (kiln's rope, bit for bit the one kv_append applies); the f16
   cache is NumPy's `astype(float16)`.
2. `rope_f32` against float64 RoPE (both pairings), within
   `(|x0| + |x1|) (dtheta + 1.2e-7) + 4u|y|`, `dtheta = 8 u p inv + u theta` (docs/attention.md).
3. `attention_decode_*` (the variants named by --variants) against float64 attention over the
   DEQUANTIZED cache (`gguf.quants.dequantize`), within
   `max|v| (2e + (3 (n_s + 128 + 6) + 4) u)`, `e = max_k scale (D+6) u sum|q k| + 2u |s_k - m| + 2u`,
   `n_s = min(keys, keys / 128 + 128)` a bound on the keys one of the (at most 128) splits holds
   at wave 32 or 64, `u = 2^-24` (derivation in docs/attention.md).
4. `attention_decode_q8_0_i8_*` (the variants named by --i8-variants; the i8 order: q and P
   quantized to 8 bits) against float64 attention over the dequantized cache and the
   UNQUANTIZED q, within `max|v| (exp(2e) - 1 + (3 (n_s + 128 + 6) + 4) u + 2 n 4.5e-38) + 1.01
   exp(2e) E_P` (`n` keys), `e` adding q's rounding `scale sum_d delta_b |k_d|` (`delta_b = d_b
   (1/2 + 1e-5) + 127 |d_b - f16(d_b)|`, `d_b = amax_b / 127` of q's block) to the f32 terms
   (`(D/32 + 2) u` for the fmas, `2u |s_k - m| + 1e-5` for the subtraction and the weight's exp,
   which is off by at most 4.5e-38 below -86), and `E_P = sum_chunks max_j W_j |d_v(j)| / 254 * sum_j |vq_j[d]| / L` P's rounding
   (docs/attention.md, "The i8 order").

Usage (from the repository root, after `cargo build -p kiln` and a package that holds the
attention families):
    ./target/debug/kiln build --arch gfx1030 --kernel kv_append_q8_0,kv_append_f16,rope_f32,\
attention_decode_q8_0_d64,attention_decode_q8_0_d128,attention_decode_f16_d64,\
attention_decode_f16_d128,attention_decode_q8_0_i8_d64,attention_decode_q8_0_i8_d128 \
-o target/dist-attn
    python3 bench/attention_ref.py --package target/dist-attn [--device cuda --arch sm_90] [--large]
Needs `pip install gguf numpy`. Exits non-zero on the first failed check.
"""

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from gguf.constants import GGMLQuantizationType
from gguf.quants import dequantize, quantize

U = 2.0**-24
MAX_SPLITS = 128
# The i8 order's weight exp (specs/src/math.rs, exp_sub_i8): relative error for d >= -86, absolute
# below.
EXP_I8_MAX_REL = 1.0e-5
EXP_I8_MAX_ABS = 4.5e-38
SIN_COS_MAX_ABS = 1.2e-7


class Kiln:
    def __init__(self, args):
        self.args = args
        self.tmp = tempfile.mkdtemp(prefix="kiln-attn-ref-")
        self.n = 0

    def run(self, kernel, arrays, scalars, variant=None):
        """`kiln run` with the arrays as .npy files; returns the written arrays by name."""
        self.n += 1
        d = os.path.join(self.tmp, f"call{self.n}")
        os.makedirs(d)
        cmd = [self.args.kiln, "run", kernel, "--device", self.args.device,
               "--package", self.args.package, "--out", os.path.join(d, "out")]
        if self.args.arch:
            cmd += ["--arch", self.args.arch]
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


def f32s(x):
    """A float32 scalar as text that parses back to the same f32."""
    return repr(float(np.float32(x)))


def q8_0_bytes(x):
    """Rows of x (float32, last dim a multiple of 32) as ggml Q8_0 bytes, by gguf."""
    return quantize(np.ascontiguousarray(x, dtype=np.float32), GGMLQuantizationType.Q8_0)


def rope64(x, pos0, n_dims, base, neox):
    """float64 RoPE of x [T][H][D] at positions pos0 + t."""
    t_n, _, d = x.shape
    y = x.astype(np.float64).copy()
    n = min(n_dims, d) & ~1
    half = n // 2
    for t in range(t_n):
        p = pos0 + t
        for i in range(half):
            th = p * base ** (-2.0 * i / n)
            c, s = np.cos(th), np.sin(th)
            a, b = (i, i + half) if neox else (2 * i, 2 * i + 1)
            x0, x1 = x[t, :, a].astype(np.float64), x[t, :, b].astype(np.float64)
            y[t, :, a] = x0 * c - x1 * s
            y[t, :, b] = x0 * s + x1 * c
    return y


def rope_bound(x, pos0, n_dims, base, neox, want):
    t_n, _, d = x.shape
    tol = np.zeros_like(want)
    n = min(n_dims, d) & ~1
    half = n // 2
    ax = np.abs(x.astype(np.float64))
    for t in range(t_n):
        p = pos0 + t
        for i in range(half):
            inv = base ** (-2.0 * i / n)
            dth = 8 * U * p * inv + U * p * inv
            a, b = (i, i + half) if neox else (2 * i, 2 * i + 1)
            s = ax[t, :, a] + ax[t, :, b]
            for c in (a, b):
                tol[t, :, c] = s * (dth + SIN_COS_MAX_ABS) + 4 * U * np.abs(want[t, :, c])
    return tol


def check(what, ok, detail):
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail else ""))
    if not ok:
        sys.exit(1)


def check_kv_append(k, rng, neox):
    pos, t_n, kv, d, ctx, nd, base = 40, 3, 2, 128, 48, 128, 10000.0
    kx = rng.standard_normal((t_n, kv, d)).astype(np.float32) * 2
    vx = rng.standard_normal((t_n, kv, d)).astype(np.float32) * 2
    sc = dict(pos=pos, n_tokens=t_n, n_kv_heads=kv, head_dim=d, ctx_max=ctx, n_dims=nd,
              base=f32s(base), neox=int(neox))
    roped = k.run("rope_f32", {"x": kx}, dict(pos=pos, n_tokens=t_n, n_heads=kv, head_dim=d,
                                              n_dims=nd, base=f32s(base), neox=int(neox)))["out"]
    roped = roped.reshape(t_n, kv, d)
    want = rope64(kx, pos, nd, base, neox)
    tol = rope_bound(kx, pos, nd, base, neox, want)
    err = np.abs(roped - want)
    check(f"rope_f32 vs float64 ({'neox' if neox else 'normal'})", bool((err <= tol).all()),
          f"worst {float((err / np.maximum(tol, 1e-300)).max()):.3f} of the bound")
    for cache in ("q8_0", "f16"):
        row_bytes = d // 32 * 34 if cache == "q8_0" else d * 2
        dt = np.uint8 if cache == "q8_0" else np.float16
        n = kv * ctx * row_bytes // np.dtype(dt).itemsize
        out = k.run(f"kv_append_{cache}", {"k": kx, "v": vx,
                    "k_cache": np.zeros(n, dt), "v_cache": np.zeros(n, dt)}, sc)
        for name, src in (("k_cache", roped), ("v_cache", vx)):
            got = out[name].reshape(kv, ctx, -1)[:, pos:pos + t_n]
            if cache == "q8_0":
                ref = q8_0_bytes(src.transpose(1, 0, 2).reshape(kv * t_n, d)).reshape(kv, t_n, -1)
                same = np.array_equal(got, ref)
            else:
                ref = src.transpose(1, 0, 2).astype(np.float16)
                same = np.array_equal(got.view(np.uint16), ref.view(np.uint16))
            check(f"kv_append_{cache} {name} == {'gguf Q8_0' if cache == 'q8_0' else 'numpy f16'}",
                  same, "")


def row64(q, kd, vd, t, qh, g, keys, scale):
    """Row `t`, q head `qh` in float64: q, the visible keys and values, the scores, their max and
    the softmax's numerators `w = exp(s - m)`."""
    h = qh // g
    qv = q[t, qh].astype(np.float64)
    kk = kd[h, :keys].astype(np.float64)
    vv = vd[h, :keys].astype(np.float64)
    s = scale * (kk @ qv)
    m = s.max()
    return qv, kk, vv, s, m, np.exp(s - m)


def attention64(q, kd, vd, pos, t_n, kv, g, ctx, scale):
    """float64 attention and its bound, q [T][nq][D], kd/vd [kv][ctx][D] (dequantized)."""
    nq, d = kv * g, q.shape[-1]
    want = np.zeros((t_n, nq, d))
    tol = np.zeros((t_n, nq, d))
    for t in range(t_n):
        keys = min(pos + t + 1, ctx)
        for qh in range(nq):
            qv, kk, vv, s, m, w = row64(q, kd, vd, t, qh, g, keys, scale)
            want[t, qh] = (w @ vv) / w.sum()
            e = (scale * (d + 6) * U * (np.abs(kk) @ np.abs(qv)) + 2 * U * np.abs(s - m) + 2 * U).max()
            n_s = min(keys // MAX_SPLITS + 128, keys)
            tol[t, qh] = np.abs(vv).max() * (2 * e + (3 * (n_s + MAX_SPLITS + 6) + 4) * U)
    return want, tol


def q8_0_parts(b, rows, d):
    """Q8_0 bytes of `rows` rows of `d` values as (scales [rows][d/32] f64, quants [rows][d] f64)."""
    blk = np.asarray(b, dtype=np.uint8).reshape(rows, d // 32, 34)
    sc = blk[:, :, :2].copy().view(np.float16)[:, :, 0].astype(np.float64)
    qs = blk[:, :, 2:].view(np.int8).astype(np.float64).reshape(rows, d)
    return sc, qs


def attention64_i8(q, kd, vd, vb, pos, t_n, kv, g, ctx, scale):
    """float64 attention (q unquantized) and the i8 order's bound (docs/attention.md)."""
    nq, d = kv * g, q.shape[-1]
    nb = d // 32
    vs, vq = q8_0_parts(vb, kv * ctx, d)
    vs, vq = vs.reshape(kv, ctx, nb), vq.reshape(kv, ctx, d)
    # q's rounding a dimension: half a step of the f32 scale plus |qq| <= 127 times its f16 rounding.
    amax = np.abs(q.reshape(t_n, nq, nb, 32)).max(axis=-1)
    dq = (amax / np.float32(127)).astype(np.float32)
    d16 = dq.astype(np.float16).astype(np.float64)
    delta = dq.astype(np.float64) * (0.5 + 1e-5) + 127 * np.abs(dq - d16)
    delta = np.repeat(delta, 32, axis=-1)
    want = np.zeros((t_n, nq, d))
    tol = np.zeros((t_n, nq, d))
    for t in range(t_n):
        keys = min(pos + t + 1, ctx)
        for qh in range(nq):
            h = qh // g
            qv, kk, vv, s, m, w = row64(q, kd, vd, t, qh, g, keys, scale)
            lsum = w.sum()
            want[t, qh] = (w @ vv) / lsum
            dl = delta[t, qh]
            e = (scale * (np.abs(kk) @ dl) + scale * (nb + 2) * U * (np.abs(kk) @ (np.abs(qv) + dl))
                 + 2 * U * np.abs(s - m) + EXP_I8_MAX_REL).max()
            n_s = min(keys // MAX_SPLITS + 128, keys)
            grow = np.exp(2 * e)
            base = np.abs(vv).max() * (grow - 1 + (3 * (n_s + MAX_SPLITS + 6) + 4) * U
                                       + 2 * keys * EXP_I8_MAX_ABS)
            e_p = np.zeros(d)
            for c0 in range(0, keys, 32):
                c1 = min(c0 + 32, keys)
                big = (w[c0:c1, None] * np.abs(vs[h, c0:c1])).max(axis=0)  # [nb]
                e_p += np.repeat(big, 32) / 254 * np.abs(vq[h, c0:c1]).sum(axis=0)
            tol[t, qh] = base + 1.01 * grow * e_p / lsum
    return want, tol


def check_attention(k, rng, cache, d, kv, g, pos, t_n, ctx, variants, i8_variants=(),
                    q8_variants=()):
    scale = np.float32(1.0 / np.sqrt(d))
    q = rng.standard_normal((t_n, kv * g, d)).astype(np.float32)
    kx = rng.standard_normal((kv * ctx, d)).astype(np.float32)
    vx = rng.standard_normal((kv * ctx, d)).astype(np.float32)
    if cache == "q8_0":
        kb, vb = q8_0_bytes(kx), q8_0_bytes(vx)
        kd = dequantize(kb, GGMLQuantizationType.Q8_0)
        vd = dequantize(vb, GGMLQuantizationType.Q8_0)
        kc, vc = kb.reshape(-1), vb.reshape(-1)
    else:
        kc, vc = kx.astype(np.float16).reshape(-1), vx.astype(np.float16).reshape(-1)
        kd, vd = kc.astype(np.float32), vc.astype(np.float32)
    kd, vd = kd.reshape(kv, ctx, d), vd.reshape(kv, ctx, d)
    want, tol = attention64(q, kd, vd, pos, t_n, kv, g, ctx, float(scale))
    sc = dict(pos=pos, n_tokens=t_n, n_kv_heads=kv, group=g, ctx_max=ctx, scale=f32s(scale))
    inputs = {"q": q, "k_cache": kc, "v_cache": vc}
    where = f"ctx={pos + t_n} T={t_n} kv={kv} group={g}"
    if cache == "q8_0":
        # The Q8_0-only variants; `...x2` (two blocks a wave) exists at head dim 128 only.
        variants = variants + [v for v in q8_variants if d == 128 or not v.endswith("x2")]
    check_variants(k, f"attention_decode_{cache}_d{d}", variants, inputs, sc, want, tol, where)
    if cache != "q8_0" or not i8_variants:
        return
    want, tol = attention64_i8(q, kd, vd, vb, pos, t_n, kv, g, ctx, float(scale))
    check_variants(k, f"attention_decode_q8_0_i8_d{d}", i8_variants, inputs, sc, want, tol, where)


def check_variants(k, fam, variants, inputs, sc, want, tol, where):
    """Each variant of `fam` against float64 within `tol`, and every one after the first equal
    to the first bit for bit."""
    first = None
    for v in variants:
        got = k.run(fam, inputs, sc, variant=v)["out"].reshape(want.shape)
        err = np.abs(got - want)
        check(f"{fam}/{v} {where} vs float64", bool((err <= tol).all()),
              f"max err {float(err.max()):.3g}, worst {float((err / tol).max()):.4f} of the bound")
        if first is None:
            first = got
        else:
            check(f"{fam}/{v} == {variants[0]} bit for bit",
                  np.array_equal(first.view(np.uint32), got.view(np.uint32)), "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln", default="./target/debug/kiln")
    ap.add_argument("--package", default="dist")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--arch", default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--variants", default="baseline,r8,r4")
    ap.add_argument("--q8-variants", default="",
                    help="more variants of the Q8_0 families only (e.g. r1x,r4x,r4x2; `*x2` at "
                         "head dim 128 only)")
    ap.add_argument("--i8-variants", default="baseline,mma8,mma",
                    help="variants of attention_decode_q8_0_i8_* ('' to skip the family)")
    ap.add_argument("--large", action="store_true", help="contexts 4099 and 32768 everywhere")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"attention_ref: seed {seed}")
    rng = np.random.default_rng(seed)
    k = Kiln(a)
    for neox in (False, True):
        check_kv_append(k, rng, neox)
    variants = a.variants.split(",")
    # (cache, head dim, kv heads, group, pos, T, ctx_max)
    cases = [
        ("q8_0", 64, 3, 3, 4098, 1, 4101),
        ("q8_0", 64, 3, 3, 292, 8, 300),
        ("q8_0", 128, 8, 4, 126, 3, 130),
        ("f16", 64, 3, 3, 60, 5, 66),
        ("f16", 128, 8, 4, 5, 2, 9),
    ]
    if a.large:
        for cache in ("q8_0", "f16"):
            for d, kv, g in ((64, 3, 3), (128, 8, 4)):
                cases += [(cache, d, kv, g, 4091, 8, 4099), (cache, d, kv, g, 32767, 1, 32768),
                          (cache, d, kv, g, 32760, 8, 32768)]
    i8_variants = [v for v in a.i8_variants.split(",") if v]
    q8_variants = [v for v in a.q8_variants.split(",") if v]
    for c in cases:
        check_attention(k, rng, *c, variants, i8_variants, q8_variants)
    print("all checks passed")


if __name__ == "__main__":
    main()
