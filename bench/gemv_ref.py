#!/usr/bin/env python3
"""Outside reference for the GEMV families (issue 12): kiln's kernels through `kiln run` (the
interpreter by default, or a GPU), against the PyPI package `gguf` (ggml's Q8_0 / Q4_0 / Q4_1 /
BF16 bytes and their dequantization) and a float64 NumPy product with the UNQUANTIZED
activations.

Per format and shape, on fresh random data (seeded, printed):
1. the weights are quantized by `gguf.quants.quantize` (F16: NumPy's `astype(float16)`); the
   activations `x` (f32) are quantized by kiln's `quantize_q8_1s_f32` (ggml's Q8_1; the
   quantize family is checked against ggml's reference separately);
2. `gemv_<fmt>` (ggml layout) and, for the quantized formats, `repack_<fmt>` + `gemv_<fmt>_rp`
   give `y` (t x n); both must agree bit for bit;
3. `ref = x64 @ dequantize(W)64.T`, and every output must satisfy `|y - ref| <= E`, where E adds
   up, per block b of 32 values (d_a = amax_b / 127 the activation scale, u = 2^-24):
   - activation rounding: `sum_j |w_j| * d_a * (1/2 + 127 * 2^-11)` (q rounded to nearest,
     d stored as f16: relative 2^-11, |q| <= 127);
   - Q4_0: `8 |d_w| * 2^-11 * 32 * 127 d_a` (ggml's s = d * sum q stored as f16);
   - Q4_1: `|m_w| * 2^-11 * 32 * 127 d_a` (the same s);
   - f32 arithmetic: `(3 + k/32 + 12) * u * sum_j |w_j x_j|` (three roundings a block term, one
     add a block in a slot, log2(64) butterfly levels; generous);
   f16 / bf16 weights take f32 activations: only the f32 term, with 32 sequential fma a block
   (`32 + k/32 + 12`).
   It prints the largest |y - ref| / E over the outputs (how much of the bound is used).

Usage (from the repository root; the package must hold the gemv, repack and quantize families):
    ./target/debug/kiln build --arch gfx1030 -o /tmp/gemv-dist
    python3 bench/gemv_ref.py --package /tmp/gemv-dist [--kiln ./target/debug/kiln] [--device cuda]
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

U = 2.0**-24
H = 2.0**-11


def run(args, kernel, arrays, shapes, out, variant=None):
    d = tempfile.mkdtemp(dir=out)
    cmd = [args.kiln, "run", kernel, "--device", args.device, "--package", args.package, "--out", d]
    if args.arch:
        cmd += ["--arch", args.arch]
    if variant:
        cmd += ["--variant", variant]
    for name, a in arrays.items():
        p = os.path.join(d, f"in_{name}.npy")
        np.save(p, a)
        cmd += ["--arg", f"{name}={p}"]
    for name, v in shapes.items():
        cmd += ["--shape", f"{name}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"kiln run {kernel} failed:\n{r.stderr}")
    return {f[:-4]: np.load(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".npy") and not f.startswith("in_")}


def check(args, rng, fmt, n, k, t, out):
    w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    x = rng.standard_normal((t, k)).astype(np.float32)
    x[0, :32] = 0.0  # an all-zero block (d = 0)
    extra = []  # other families of the same format, checked against the same bound
    if fmt == "f16":
        wq = w.astype(np.float16)
        wd = wq.astype(np.float64)
        arrays = {"w": wq.reshape(-1), "x": x.reshape(-1)}
    elif fmt == "bf16":
        raw = quantize(w, GT.BF16)
        wd = dequantize(raw, GT.BF16).astype(np.float64)
        arrays = {"w": raw.reshape(-1).view(np.uint16), "x": x.reshape(-1)}
    else:
        gt = {"q8_0": GT.Q8_0, "q4_0": GT.Q4_0, "q4_1": GT.Q4_1}[fmt]
        raw = quantize(w, gt)
        wd = dequantize(raw, gt).astype(np.float64)
        act = run(args, "quantize_q8_1s_f32", {"x": x.reshape(-1)}, {"n": t * k}, out)
        arrays = {"w": raw.reshape(-1), "xq": act["xq"], "xs": act["xs"]}
    shapes = {"n": n, "k": k, "t": t}
    y = run(args, f"gemv_{fmt}", arrays, shapes, out)["y"].reshape(t, n).astype(np.float64)
    if fmt in ("q8_0", "q4_0", "q4_1"):
        rp = run(args, f"repack_{fmt}", {"w": arrays["w"]}, {"n": n, "k": k}, out)
        arrays_rp = {"wq": rp["wq"], "ws": rp["ws"], "xq": arrays["xq"], "xs": arrays["xs"]}
        y_rp = run(args, f"gemv_{fmt}_rp", arrays_rp, shapes, out)["y"].reshape(t, n)
        if y_rp.astype(np.float64).tobytes() != y.tobytes():
            sys.exit(f"{fmt} n={n} k={k} t={t}: the repacked layout differs from ggml's")
        if fmt == "q8_0" and t <= 8 and n % 16 == 0:
            # The matrix-unit family keeps its own order (4 K slots): within the same bound. Its
            # weights are in the tile layout (16-row tiles; per tile and block, chunk 4g + j =
            # bytes 8j..8j+8 of row g, then of row g + 8) and its scales by tile (per tile and
            # block, the 16 rows' scales), rearranged here by NumPy.
            nb = k // 32
            wq = rp["wq"].reshape(n // 16, 2, 8, nb, 4, 8)  # tile, h, g, block, j, byte
            tile = np.ascontiguousarray(wq.transpose(0, 3, 2, 4, 1, 5)).reshape(-1)
            ws = rp["ws"].reshape(n // 16, 16, nb)  # tile, row, block
            tile_s = np.ascontiguousarray(ws.transpose(0, 2, 1)).reshape(-1)
            arrays_k4 = dict(arrays_rp, wq=tile, ws=tile_s)
            y_k4 = run(args, "gemv_q8_0_rp_k4", arrays_k4, shapes, out)["y"].reshape(t, n).astype(np.float64)
            extra = [("gemv_q8_0_rp_k4", y_k4)]
    x64 = x.astype(np.float64)
    ref = x64 @ wd.T
    nb = k // 32
    xb = x64.reshape(t, nb, 32)
    wb = wd.reshape(n, nb, 32)
    # Quantized: three roundings a block term; f16 / bf16: 32 sequential fma a block.
    per_block = 3 if fmt in ("q8_0", "q4_0", "q4_1") else 32
    e = (per_block + nb + 12) * U * np.einsum("tbj,nbj->tn", np.abs(xb), np.abs(wb))
    if fmt in ("q8_0", "q4_0", "q4_1"):
        da = np.abs(xb).max(axis=2) / 127.0  # t x nb
        abs_w = np.abs(wb).sum(axis=2)  # n x nb
        e += np.einsum("tb,nb->tn", da, abs_w) * (0.5 + 127 * H)
        blocks = raw.reshape(n, nb, -1)
        dw = np.abs(blocks[:, :, :2].copy().view(np.float16)[:, :, 0].astype(np.float64))
        if fmt == "q4_0":
            e += 8 * H * 32 * 127 * np.einsum("tb,nb->tn", da, dw)
        if fmt == "q4_1":
            mw = np.abs(blocks[:, :, 2:4].copy().view(np.float16)[:, :, 0].astype(np.float64))
            e += H * 32 * 127 * np.einsum("tb,nb->tn", da, mw)
        e += 1e-30
    else:
        e += 1e-30
    for name, yy in [(f"gemv_{fmt}", y)] + extra:
        err = np.abs(yy - ref)
        ratio = (err / e).max()
        ok = bool((err <= e).all()) and np.isfinite(yy).all()
        print(f"{'ok  ' if ok else 'FAIL'} {name:<16} n={n:<4} k={k:<5} t={t}  max |y-ref| = {err.max():.3e}, "
              f"max |y-ref|/E = {ratio:.3f}")
        if not ok:
            sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", default="./target/debug/kiln")
    ap.add_argument("--package", default="dist")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--arch", default=None)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    print(f"gemv_ref: seed {seed}")
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as out:
        for fmt in ["q8_0", "q4_0", "q4_1", "f16", "bf16"]:
            for n, k, t in [(37, 416, 3), (5, 64, 8), (19, 4096 + 32, 1), (48, 416, 6), (16, 4096 + 32, 1)]:
                check(args, rng, fmt, n, k, t, out)
    print("gemv_ref: every output within its bound")


if __name__ == "__main__":
    main()
