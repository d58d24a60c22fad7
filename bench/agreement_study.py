#!/usr/bin/env python3
"""Which arithmetic choices move SmolLM2's top-1 away from llama.cpp's? (issue 16)

A NumPy emulation of the llama forward pass (SmolLM2-135M-Instruct from its GGUF), run
teacher-forced over every prompt of an oracle fixture (tools/engine/ref/oracle.cpp's JSON:
llama.cpp CPU, AVX-512 native build, Q8_0 KV cache, flash attention), with one switch per
arithmetic choice kiln and llama.cpp make differently:

  --act Q      activations rounded to 8 bits per 32-value block before every quantized matmul
               (Q8_1 for Q4_1 weights, Q8_0 for Q8_0 weights: the same int8 values), or 'off'
  --act-scale  the activation block scale used in the dot product: 'f16' (as stored) or 'f32'
  --kv Q       K (after RoPE) and V stored as Q8_0 blocks, or 'off'
  --qq Q       q rounded to Q8_0 per 32-value block for the attention scores (llama.cpp's CPU
               flash attention over a Q8_0 K cache), or 'off' (f32 q: kiln)
  --float      'f64' (every op in float64; quantized dot products exact) or 'f32' (f32 ops:
               GEMV block terms f32(d_w d_x) * sumi added in f32, f32 RoPE angles as ggml builds
               them, f32 softmax / SwiGLU / residuals, RMSNorm's sum of squares in double)
  --order      with --float f32: how a GEMV adds its block terms: 'seq' (in block order) or
               'tree' (pairwise); another order of the same arithmetic, to show the noise floor
  --jitter S   multiply every GEMV input by (1 + u 2^-24), u uniform in [-1, 1] from seed S: a
               last-bit change, the size of one f32 rounding, to measure how much top-1
               agreement moves from rounding noise alone (0: off)

A quantizer Q is one of (d = amax/127 in f32, stored as f16; a zero block gives zeros):
  kiln       q = roundf(x * (1/d)), half away from zero (kiln; ggml's generic C code)
  simd       q = rint(x * (127/amax)), half to even (ggml's AVX/AVX2 quantize_row_q8_0/q8_1)
  kiln-even  1/d with half to even;  simd-away  127/amax with half away from zero

Agreement is counted as tools/engine/ref/self_agreement.py (and oracle::compare) count it:
top-1 equal at a position; a disagreement is a near tie when the oracle's logits of the two ids
are within 0.5; |dlogit| over the oracle's top-8 ids (this script has the whole row, so every
pair is measured); the change of the oracle's top-1/top-2 gap.

  python3 bench/agreement_study.py --model models/SmolLM2-135M-Instruct.Q4_1.gguf \\
      --oracle tools/engine/tests/data/oracle-q4_1.json [--preset kiln] [flags] [--list]
  python3 bench/agreement_study.py --all      # the configuration table, both models
"""

import argparse
import json
import sys
import time

import numpy as np
import gguf
from gguf import GGMLQuantizationType as QT

F32 = np.float32
NEAR_TIE = 0.5
QUANTIZERS = ("kiln", "simd", "kiln-even", "simd-away")


# ---------------------------------------------------------------- model

class Weight:
    """A quantized matrix (n outputs, k inputs) as its blocks: quants (b, n, 32) as f32
    (exact small integers), scale d (n, b) and, for Q4_1, min m (n, b), both f16 values."""

    def __init__(self, t):
        self.ty = t.tensor_type
        raw = np.asarray(t.data).reshape(-1).view(np.uint8)
        self.k, self.n = (int(v) for v in t.shape.tolist())  # ggml [ne0 = in, ne1 = out]
        nb = self.k // 32
        if self.ty == QT.Q8_0:
            b = raw.reshape(self.n, nb, 34)
            self.d = b[:, :, 0:2].copy().view(np.float16).reshape(self.n, nb).astype(np.float64)
            q = b[:, :, 2:].copy().view(np.int8)
            self.m = None
        elif self.ty == QT.Q4_1:
            b = raw.reshape(self.n, nb, 20)
            self.d = b[:, :, 0:2].copy().view(np.float16).reshape(self.n, nb).astype(np.float64)
            self.m = b[:, :, 2:4].copy().view(np.float16).reshape(self.n, nb).astype(np.float64)
            qs = b[:, :, 4:]
            q = np.concatenate([qs & 15, qs >> 4], axis=2)
        else:
            raise SystemExit(f"{t.name}: unsupported type {self.ty.name}")
        self.q = np.ascontiguousarray(q.astype(F32).transpose(1, 0, 2))  # (b, n, 32)
        deq = self.q.astype(np.float64) * self.d.T[:, :, None]
        if self.m is not None:
            deq = deq + self.m.T[:, :, None]
        self.w64 = np.ascontiguousarray(deq.transpose(1, 0, 2).reshape(self.n, self.k))  # exact
        if self.m is not None:  # d q alone, for the Q4_1 dot product with the Q8_1 sum term
            self.wdq64 = np.ascontiguousarray(
                (self.q.astype(np.float64) * self.d.T[:, :, None]).transpose(1, 0, 2).reshape(self.n, self.k))
        self.d32 = np.ascontiguousarray(self.d.T.astype(F32))  # (b, n)
        self.m32 = None if self.m is None else np.ascontiguousarray(self.m.T.astype(F32))


class Model:
    def __init__(self, path):
        r = gguf.GGUFReader(path)
        f = {k: v.contents() for k, v in r.fields.items() if not k.startswith("tokenizer.ggml.")}
        self.L = f["llama.block_count"]
        self.H = f["llama.embedding_length"]
        self.NH = f["llama.attention.head_count"]
        self.NKV = f["llama.attention.head_count_kv"]
        self.D = self.H // self.NH
        self.eps = f["llama.attention.layer_norm_rms_epsilon"]
        self.base = f["llama.rope.freq_base"]
        T = {t.name: t for t in r.tensors}

        def vec(name):
            return np.asarray(T[name].data, dtype=np.float64).reshape(-1)

        self.emb = Weight(T["token_embd.weight"])
        assert (self.emb.n, self.emb.k) == (49152, self.H)
        self.layers = []
        for i in range(self.L):
            p = f"blk.{i}."
            self.layers.append({
                "an": vec(p + "attn_norm.weight"), "fn": vec(p + "ffn_norm.weight"),
                **{k: Weight(T[p + n]) for k, n in (
                    ("q", "attn_q.weight"), ("k", "attn_k.weight"), ("v", "attn_v.weight"),
                    ("o", "attn_output.weight"), ("g", "ffn_gate.weight"),
                    ("u", "ffn_up.weight"), ("dn", "ffn_down.weight"))}})
        self.onorm = vec("output_norm.weight")
        l0 = self.layers[0]
        assert (l0["q"].n, l0["q"].k) == (self.H, self.H)
        assert (l0["k"].n, l0["g"].n, l0["dn"].k) == (self.NKV * self.D, 1536, 1536)


# ---------------------------------------------------------------- arithmetic

def round_away(x):
    return np.trunc(x + np.copysign(0.5, x))


def q8_blocks(x, how):
    """Rows of x (t, k), rounded to f32 first, to 32-value blocks: quants (t, b, 32) as
    float64 integers, d as f16 (t, b), d as f32 (t, b)."""
    x = np.asarray(x, dtype=F32).reshape(x.shape[0], -1, 32)
    amax = np.abs(x).max(axis=2)
    d = (amax / F32(127)).astype(F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        if how.startswith("kiln"):
            inv = np.where(d != 0, F32(1) / d, F32(0)).astype(F32)
        else:
            inv = np.where(amax != 0, F32(127) / amax, F32(0)).astype(F32)
    v = (x * inv[:, :, None]).astype(F32).astype(np.float64)
    q = np.rint(v) if how in ("simd", "kiln-even") else round_away(v)
    dh = d.astype(np.float16).astype(np.float64)
    return q, dh, d.astype(np.float64)


def q8_roundtrip(x, how):
    """x (..., D) through Q8_0 blocks and back (dequantized values, exact in f32)."""
    shp = x.shape
    q, dh, _ = q8_blocks(x.reshape(-1, shp[-1]), how)
    return (q * dh[:, :, None]).reshape(shp)


def fma32(a, b, c):
    """f32 fma(a, b, c), emulated: the float64 product of two f32 values is exact."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(F32)


def tree_sum(terms):
    """Pairwise f32 sum over axis 0."""
    t = terms
    while t.shape[0] > 1:
        if t.shape[0] % 2:
            t = np.concatenate([t, np.zeros_like(t[:1])])
        t = (t[0::2] + t[1::2]).astype(F32)
    return t[0]


class Arith:
    def __init__(self, cfg):
        self.c = cfg
        self.f32 = cfg["float"] == "f32"
        self.rng = np.random.default_rng(cfg.get("jitter") or 0)

    def cast(self, x):
        return np.asarray(x, dtype=F32) if self.f32 else np.asarray(x, dtype=np.float64)

    # -- quantized matmul: y (t, n) = x (t, k) W^T
    def matmul(self, W, x, chunk=8192):
        c = self.c
        if c.get("jitter"):
            # a last-bit perturbation of the GEMV input: each value times (1 + u 2^-24), u in [-1, 1]
            x = x * (1 + self.rng.uniform(-1, 1, size=x.shape) * 2.0 ** -24)
        if c["act"] == "off":
            if self.f32:
                return (x.astype(F32) @ W.w64.T.astype(F32)).astype(F32)
            return x.astype(np.float64) @ W.w64.T
        q, dh, d32 = q8_blocks(x, c["act"])
        dx = dh if c["act_scale"] == "f16" else d32
        if not self.f32:
            xd = (q * dx[:, :, None]).reshape(x.shape[0], -1)
            y = xd @ W.w64.T if W.m is None else None
            if W.m is not None:
                # Q4_1: sum_b d_w d_x sumi + m_w s_x, s_x = f16(d_x(f32) * sum q) as ggml stores it
                y = xd @ W.wdq64.T
                s = q.sum(axis=2) * d32
                if c["act_scale"] == "f16":
                    s = s.astype(F32).astype(np.float16).astype(np.float64)
                y += s @ W.m.T
            return y
        # f32: exact integer block sums, then f32 block terms accumulated in f32
        t = x.shape[0]
        qx = np.ascontiguousarray(q.astype(F32).transpose(1, 2, 0))  # (b, 32, t)
        dxf = dx.astype(F32)  # (t, b)
        if W.m is not None:
            s = (q.sum(axis=2) * d32).astype(F32)
            sf = s.astype(np.float16).astype(F32) if c["act_scale"] == "f16" else s
        out = np.empty((t, W.n), dtype=F32)
        for n0 in range(0, W.n, chunk):
            n1 = min(W.n, n0 + chunk)
            sumi = np.matmul(W.q[:, n0:n1], qx)  # (b, n, t), exact: |sum| < 2^24
            dd = W.d32[:, n0:n1, None] * dxf.T[:, None, :]  # (b, n, t), f32 products
            if c["order"] == "seq":
                # block terms f32(f32(d_w d_x) sumi), added in block order
                terms = dd * sumi
                acc = terms[0].copy()
                for b in range(1, sumi.shape[0]):
                    acc += terms[b]
                if W.m is not None:
                    ms = W.m32[:, n0:n1, None] * sf.T[:, None, :]
                    macc = np.zeros_like(acc)
                    for b in range(ms.shape[0]):
                        macc = (macc + ms[b]).astype(F32)
                    acc = (acc + macc).astype(F32)
            else:
                terms = dd * sumi
                if W.m is not None:
                    terms += W.m32[:, n0:n1, None] * sf.T[:, None, :]
                acc = tree_sum(terms)
            out[:, n0:n1] = acc.T
        return out

    def rmsnorm(self, x, w, eps):
        if self.f32:
            x = x.astype(F32)
            ss = (x * x).astype(F32).astype(np.float64).sum(axis=1, keepdims=True)  # ggml_float
            mean = (ss / x.shape[1]).astype(F32)
            scale = (F32(1) / np.sqrt((mean + F32(eps)).astype(F32))).astype(F32)
            return ((x * scale).astype(F32) * w.astype(F32)).astype(F32)
        return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w

    def rope(self, x, base):
        """x (t, heads, D), position = row index; normal pairs (2i, 2i+1)."""
        t, _, D = x.shape
        pos = np.arange(t, dtype=np.float64)[:, None]
        if self.f32:
            # ggml_rope_cache_init: theta = p; theta *= powf(base, -2/D) for each pair, in f32
            ts = F32(np.float32(base) ** np.float32(-2.0 / D))
            th = np.empty((t, D // 2), dtype=F32)
            cur = pos.astype(F32)[:, 0]
            for i in range(D // 2):
                th[:, i] = cur
                cur = (cur * ts).astype(F32)
            c = np.cos(th.astype(np.float64)).astype(F32)[:, None, :]
            s = np.sin(th.astype(np.float64)).astype(F32)[:, None, :]
            x = x.astype(F32)
            x0, x1 = x[..., 0::2], x[..., 1::2]
            y = np.empty_like(x)
            y[..., 0::2] = ((x0 * c).astype(F32) - (x1 * s).astype(F32)).astype(F32)
            y[..., 1::2] = ((x0 * s).astype(F32) + (x1 * c).astype(F32)).astype(F32)
            return y
        i = np.arange(D // 2)
        th = pos * base ** (-2.0 * i / D)
        c, s = np.cos(th)[:, None, :], np.sin(th)[:, None, :]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        y = np.empty_like(x)
        y[..., 0::2] = x0 * c - x1 * s
        y[..., 1::2] = x0 * s + x1 * c
        return y

    def attention(self, q, k, v, group):
        """q (t, NH, D), k/v (t, NKV, D) already through the cache; causal."""
        c = self.c
        t, NH, D = q.shape
        scale = 1.0 / np.sqrt(D)
        out = np.empty_like(q)
        mask = np.triu(np.ones((t, t), dtype=bool), 1)
        if c["qq"] != "off":
            qqv, qdh, _ = q8_blocks(q.reshape(t * NH, D), c["qq"])
            qdeq = (qqv * qdh[:, :, None]).reshape(t, NH, D)
        for h in range(NH):
            kv = h // group
            K, V = k[:, kv, :], v[:, kv, :]
            if c["qq"] != "off":
                if self.f32:
                    # ggml_vec_dot_q8_0_q8_0: per block f16(d_q) f16(d_k) * sumi, f32 accumulation
                    qi = qqv.reshape(t, NH, -1, 32)[:, h]  # (t, b, 32)
                    s = self._q8dot_scores(qi, qdh.reshape(t, NH, -1)[:, h], K)
                    s = (s * F32(scale)).astype(F32)
                else:
                    s = qdeq[:, h, :] @ K.T * scale
            else:
                if self.f32:
                    s = (q[:, h, :].astype(F32) @ K.T.astype(F32)).astype(F32) * F32(scale)
                else:
                    s = q[:, h, :] @ K.T * scale
            s = np.where(mask, -np.inf, s)
            m = s.max(axis=1, keepdims=True)
            if self.f32:
                p = np.exp((s - m).astype(F32)).astype(F32)
                l = p.sum(axis=1, keepdims=True, dtype=F32)
                o = (p @ V.astype(F32)).astype(F32) / l
            else:
                p = np.exp(s - m)
                o = (p @ V) / p.sum(axis=1, keepdims=True)
            out[:, h, :] = o
        return out

    def _q8dot_scores(self, qi, qd, K):
        """f32 scores of Q8_0 q blocks against K rows (K: Q8_0-dequantized or f32 values; the
        K side as Q8_0 blocks: exact when K came from the Q8_0 cache, else rounded here)."""
        t = K.shape[0]
        kq, kdh, _ = q8_blocks(K, "simd")
        if self.c["kv"] != "off":
            # K = q * f16(d) exactly; requantizing recovers the same product values blockwise
            kdeq = (kq * kdh[:, :, None])
            if not np.array_equal(kdeq.reshape(K.shape), K.astype(np.float64)):
                # fall back to the exact product of q blocks with the stored values
                kq, kdh = K.reshape(t, -1, 32).astype(np.float64), np.ones((t, K.shape[1] // 32))
        sumi = np.einsum("ibj,kbj->bik", qi, kq)  # (b, tq, tk) exact
        dd = (qd.T[:, :, None].astype(F32) * kdh.T[:, None, :].astype(F32)).astype(F32)
        acc = np.zeros(sumi.shape[1:], dtype=F32)
        for b in range(sumi.shape[0]):
            acc = fma32(dd[b], sumi[b].astype(F32), acc)
        return acc


# ---------------------------------------------------------------- forward

def forward(M, ids, cfg):
    A = Arith(cfg)
    c = cfg
    t = len(ids)
    emb_rows = M.emb.w64[ids]  # Q8_0 rows dequantized: exact in f32
    x = A.cast(emb_rows)
    group = M.NH // M.NKV
    for l in M.layers:
        xn = A.rmsnorm(x, l["an"], M.eps)
        q = A.cast(A.matmul(l["q"], xn)).reshape(t, M.NH, M.D)
        k = A.cast(A.matmul(l["k"], xn)).reshape(t, M.NKV, M.D)
        v = A.cast(A.matmul(l["v"], xn)).reshape(t, M.NKV, M.D)
        q = A.rope(q, M.base)
        k = A.rope(k, M.base)
        if c["kv"] != "off":
            k = A.cast(q8_roundtrip(k, c["kv"]))
            v = A.cast(q8_roundtrip(v, c["kv"]))
        att = A.attention(q, k, v, group).reshape(t, M.H)
        h1 = A.cast(x + A.matmul(l["o"], att))
        xn = A.rmsnorm(h1, l["fn"], M.eps)
        g = A.matmul(l["g"], xn)
        u = A.matmul(l["u"], xn)
        if A.f32:
            ff = ((g / (F32(1) + np.exp(-g))).astype(F32) * u).astype(F32)
        else:
            ff = g / (1 + np.exp(-g)) * u
        x = A.cast(h1 + A.matmul(l["dn"], ff))
    xn = A.rmsnorm(x, M.onorm, M.eps)
    return np.asarray(A.matmul(M.emb, xn), dtype=np.float64)


# ---------------------------------------------------------------- comparison

def compare(oracle, logits_per_prompt):
    n = eq = near = 0
    tot = mx = gtot = 0.0
    pairs = 0
    mism = []
    for pi, (p, L) in enumerate(zip(oracle["prompts"], logits_per_prompt)):
        for i, top8 in enumerate(p["top8"]):
            row = L[i]
            n += 1
            r1 = p["top1"][i]
            c1 = int(np.argmax(row))
            rlog = {tid: lg for tid, lg in top8}
            if c1 == r1:
                eq += 1
            else:
                gap = rlog[r1] - rlog[c1] if c1 in rlog else None
                nt = gap is not None and abs(gap) <= NEAR_TIE
                near += int(nt)
                mism.append((pi, i, c1, r1, gap))
            for tid, lg in top8:
                dlt = abs(row[tid] - lg)
                tot += dlt
                pairs += 1
                mx = max(mx, dlt)
            (a1, l1), (a2, l2) = top8[0], top8[1]
            gtot += abs((row[a1] - row[a2]) - (l1 - l2))
    return {"positions": n, "top1_equal": eq, "near_ties": near, "mean_abs": tot / pairs,
            "max_abs": mx, "mean_gap_change": gtot / n, "mismatches": mism}


def run(M, oracle, cfg):
    out = [forward(M, p["ids"], cfg) for p in oracle["prompts"]]
    return compare(oracle, out)


PRESETS = {
    # name: (act, act_scale, kv, qq, float, order, what)
    "exact": ("off", "f16", "off", "off", "f64", "seq",
              "no 8-bit rounding anywhere, float64 (the model's exact function)"),
    "act": ("kiln", "f16", "off", "off", "f64", "seq", "exact + activations Q8 (kiln's quantizer)"),
    "kv": ("off", "f16", "kiln", "off", "f64", "seq", "exact + K/V cache Q8_0"),
    "kiln64": ("kiln", "f16", "kiln", "off", "f64", "seq",
               "kiln's choices (act Q8, KV Q8_0, f32 q; kiln quantizer), float64"),
    "kiln32": ("kiln", "f16", "kiln", "off", "f32", "seq", "kiln's choices, f32"),
    "kiln32-tree": ("kiln", "f16", "kiln", "off", "f32", "tree", "kiln's choices, f32, pairwise GEMV order"),
    "kiln64-simdq": ("simd", "f16", "simd", "off", "f64", "seq",
                     "kiln64 with llama.cpp's SIMD quantizer (127/amax, half-even)"),
    "kiln64-qq": ("kiln", "f16", "kiln", "simd", "f64", "seq", "kiln64 + q rounded to Q8_0"),
    "kiln64-f32scale": ("kiln", "f32", "kiln", "off", "f64", "seq",
                        "kiln64 with the activation scale unrounded (f32 d)"),
    "llama64": ("simd", "f16", "simd", "simd", "f64", "seq",
                "llama.cpp's choices (act Q8, KV Q8_0, q Q8_0; SIMD quantizer), float64"),
    "llama32": ("simd", "f16", "simd", "simd", "f32", "seq", "llama.cpp's choices, f32"),
    "llama32-tree": ("simd", "f16", "simd", "simd", "f32", "tree", "llama.cpp's choices, f32, pairwise GEMV order"),
    "llama32-kilnq": ("kiln", "f16", "kiln", "kiln", "f32", "seq",
                      "llama32 with kiln's quantizer (1/d, half away)"),
}
TABLE = ["exact", "act", "kv", "kiln64", "kiln32", "kiln32-tree", "kiln64-simdq", "kiln64-qq",
         "kiln64-f32scale", "llama64", "llama32", "llama32-tree", "llama32-kilnq",
         "kiln64@1", "kiln64@2", "kiln64@3", "kiln64@4", "llama32@1", "llama32@2", "llama32@3", "llama32@4"]


def preset_cfg(name):
    base, _, seed = name.partition("@")  # "kiln64@3": the preset with --jitter 3
    a, s, kv, qq, fl, order, _ = PRESETS[base]
    return {"act": a, "act_scale": s, "kv": kv, "qq": qq, "float": fl, "order": order,
            "jitter": int(seed) if seed else 0}


def what(name):
    base, _, seed = name.partition("@")
    return PRESETS[base][6] + (f" + jitter seed {seed}" if seed else "")


def cfg_text(c):
    return f"act={c['act']}/{c['act_scale']} kv={c['kv']} qq={c['qq']} {c['float']}" + (
        f"/{c['order']}" if c["float"] == "f32" else "") + (f" jitter={c['jitter']}" if c["jitter"] else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model")
    ap.add_argument("--oracle")
    ap.add_argument("--preset", choices=sorted(PRESETS), help="start from a named configuration")
    ap.add_argument("--act", choices=("off",) + QUANTIZERS)
    ap.add_argument("--act-scale", choices=("f16", "f32"))
    ap.add_argument("--kv", choices=("off",) + QUANTIZERS)
    ap.add_argument("--qq", choices=("off",) + QUANTIZERS)
    ap.add_argument("--float", choices=("f64", "f32"))
    ap.add_argument("--order", choices=("seq", "tree"))
    ap.add_argument("--jitter", type=int)
    ap.add_argument("--all", action="store_true", help="the configuration table on both models")
    ap.add_argument("--configs", help="with --all: comma-separated preset names")
    ap.add_argument("--list", action="store_true", help="print every disagreement")
    ap.add_argument("--json", help="write the results as JSON to this file")
    args = ap.parse_args()

    if args.all:
        names = args.configs.split(",") if args.configs else TABLE
        pairs = [("models/SmolLM2-135M-Instruct.Q4_1.gguf", "tools/engine/tests/data/oracle-q4_1.json"),
                 ("models/SmolLM2-135M-Instruct.Q8_0.gguf", "tools/engine/tests/data/oracle-q8_0.json")]
        results = {}
        t0 = time.time()
        for mp, op in pairs:
            M = Model(mp)
            oracle = json.load(open(op))
            tag = "Q4_1" if "Q4_1" in mp else "Q8_0"
            for nm in names:
                t1 = time.time()
                r = run(M, oracle, preset_cfg(nm))
                results[(nm, tag)] = r
                print(f"{tag} {nm:16s} top-1 {r['top1_equal']}/{r['positions']} "
                      f"({100 * r['top1_equal'] / r['positions']:.1f}%) near ties "
                      f"{r['near_ties']}/{r['positions'] - r['top1_equal']} |dlogit| mean "
                      f"{r['mean_abs']:.3f} max {r['max_abs']:.2f} gap change {r['mean_gap_change']:.3f} "
                      f"({time.time() - t1:.0f} s)", flush=True)
        print(f"\ntotal {time.time() - t0:.0f} s\n")
        print("| config | what | Q4_1 top-1 | Q4_1 mean / max \\|dlogit\\| | Q8_0 top-1 | Q8_0 mean / max \\|dlogit\\| | gap change Q4_1 / Q8_0 |")
        print("|---|---|---|---|---|---|---|")
        for nm in names:
            a, b = results[(nm, "Q4_1")], results[(nm, "Q8_0")]
            print(f"| {nm} | {what(nm)} | {a['top1_equal']}/{a['positions']} ({100 * a['top1_equal'] / a['positions']:.1f}%) "
                  f"| {a['mean_abs']:.3f} / {a['max_abs']:.2f} | {b['top1_equal']}/{b['positions']} "
                  f"({100 * b['top1_equal'] / b['positions']:.1f}%) | {b['mean_abs']:.3f} / {b['max_abs']:.2f} "
                  f"| {a['mean_gap_change']:.3f} / {b['mean_gap_change']:.3f} |")
        if args.json:
            json.dump({f"{k[0]} {k[1]}": v for k, v in results.items()}, open(args.json, "w"), indent=1)
        return

    if not (args.model and args.oracle):
        ap.error("--model and --oracle (or --all)")
    cfg = preset_cfg(args.preset or "kiln64")
    for k in ("act", "act_scale", "kv", "qq", "float", "order", "jitter"):
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    t0 = time.time()
    M = Model(args.model)
    oracle = json.load(open(args.oracle))
    r = run(M, oracle, cfg)
    print(f"{cfg_text(cfg)}: top-1 {r['top1_equal']}/{r['positions']} "
          f"({100 * r['top1_equal'] / r['positions']:.1f}%), {len(r['mismatches'])} disagreements, "
          f"{r['near_ties']} near ties; |dlogit| over the oracle's top-8: mean {r['mean_abs']:.4f} "
          f"max {r['max_abs']:.3f}; mean gap change {r['mean_gap_change']:.4f} ({time.time() - t0:.0f} s)")
    if args.list:
        for pi, i, c1, r1, gap in r["mismatches"]:
            g = "n/a" if gap is None else f"{gap:.4f}"
            print(f"  prompt {pi} pos {i}: ours {c1} oracle {r1} oracle gap {g}")
    if args.json:
        json.dump({"config": cfg, **r}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
