#!/usr/bin/env python3
"""A float64 NumPy twin of kiln-engine's arithmetic choices, for SmolLM2 (llama): weights as
stored (dequantized by the `gguf` package), activations quantized to Q8_1 blocks before every
GEMV (d = amax/127 as f16, q = round-half-away(x * (1/d)), Q4_1's s = f16(d * sum q)), the KV
cache as Q8_0 blocks (K after RoPE), RoPE "normal" pairs, everything else in float64. Its
logits say how far kiln's f32 kernels are from exact arithmetic on the same quantized data,
apart from how far llama.cpp's choices are (it rounds Q to Q8_0 in its CPU attention, keeps f16
where kiln keeps f32, ...).

Writes a fixture in the oracle's format (top-1 and top-8 after each position) for the first
N_POSITIONS ids of each prompt of the committed oracle fixture, so `kiln generate --oracle FILE
--positions N_POSITIONS` compares kiln with it:
  python3 scripts/engine-numpy-ref.py MODEL.gguf N_POSITIONS OUT.json
"""
import json
import sys

import numpy as np
import gguf
from gguf import GGMLQuantizationType as Q

model, npos, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = gguf.GGUFReader(model)
f = {k: v.contents() for k, v in r.fields.items() if not k.startswith("tokenizer.ggml.")}
L = f["llama.block_count"]
H = f["llama.embedding_length"]
NH = f["llama.attention.head_count"]
NKV = f["llama.attention.head_count_kv"]
D = H // NH
EPS = f["llama.attention.layer_norm_rms_epsilon"]
BASE = f["llama.rope.freq_base"]
T = {t.name: t for t in r.tensors}


def deq(name):
    t = T[name]
    shape = tuple(int(d) for d in reversed(t.shape.tolist()))
    return gguf.quants.dequantize(t.data, t.tensor_type).reshape(shape).astype(np.float64)


def f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float64)


def round_away(x):
    return np.trunc(x + np.copysign(0.5, x))


def q8_blocks(x, raw_d=False):
    """Rows of x (f32) to Q8 blocks: (q as float, d as f16 value); the f32 ops of kiln's
    quantize. With raw_d, also d before its f16 rounding (what Q8_1's s is computed from)."""
    x = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(x).max(axis=1, keepdims=True)
    d = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        idv = np.where(d != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    q = round_away((x * idv).astype(np.float32).astype(np.float64))
    if raw_d:
        return q, f16(d), d
    return q, f16(d)


class Mat:
    def __init__(self, name):
        t = T[name]
        self.ty = t.tensor_type
        raw = np.asarray(t.data).reshape(-1)
        shape = tuple(int(d) for d in reversed(t.shape.tolist()))
        self.n, self.k = shape
        nb = self.n * self.k // 32
        if self.ty == Q.Q8_0:
            b = raw.view(np.uint8).reshape(nb, 34)
            self.d = b[:, :2].copy().view(np.float16).astype(np.float64).reshape(self.n, -1)
            self.q = b[:, 2:].view(np.int8).astype(np.float64).reshape(self.n, -1, 32)
            self.m = None
        elif self.ty == Q.Q4_1:
            b = raw.view(np.uint8).reshape(nb, 20)
            self.d = b[:, 0:2].copy().view(np.float16).astype(np.float64).reshape(self.n, -1)
            self.m = b[:, 2:4].copy().view(np.float16).astype(np.float64).reshape(self.n, -1)
            qs = b[:, 4:]
            q = np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.float64)
            self.q = q.reshape(self.n, -1, 32)
        else:
            raise SystemExit(f"{name}: {self.ty.name}")

    def __call__(self, x):
        """W x for rows x (t, k), with x quantized to Q8_1 as kiln does."""
        t = x.shape[0]
        xq, xd, xd32 = q8_blocks(x, raw_d=True)
        xq = xq.reshape(t, -1, 32)
        xd = xd.reshape(t, -1)
        sumi = np.einsum("nbj,tbj->tnb", self.q, xq)
        y = (self.d[None] * xd[:, None, :] * sumi).sum(axis=2)
        if self.m is not None:
            # Q8_1's s: the f32 d (before rounding) times the quants' sum, stored as f16.
            s = f16(xd32.reshape(t, -1) * xq.sum(axis=2).astype(np.float32))
            y += (self.m[None] * s[:, None, :]).sum(axis=2)
        return y


def rmsnorm(x, w):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + EPS) * w


def rope(x, pos):
    """x (nheads, D) at position pos, normal pairs (2i, 2i+1)."""
    i = np.arange(D // 2)
    theta = pos * BASE ** (-2.0 * i / D)
    c, s = np.cos(theta), np.sin(theta)
    x0, x1 = x[:, 0::2], x[:, 1::2]
    y = np.empty_like(x)
    y[:, 0::2] = x0 * c - x1 * s
    y[:, 1::2] = x0 * s + x1 * c
    return y


def q8_roundtrip(x):
    q, d = q8_blocks(x)
    return (q * d).reshape(x.shape)


emb = Mat("token_embd.weight")
emb_f = emb.q * emb.d[..., None]  # exact rows
layers = []
for i in range(L):
    p = f"blk.{i}."
    layers.append(dict(
        an=deq(p + "attn_norm.weight"), fn=deq(p + "ffn_norm.weight"),
        q=Mat(p + "attn_q.weight"), k=Mat(p + "attn_k.weight"), v=Mat(p + "attn_v.weight"),
        o=Mat(p + "attn_output.weight"), g=Mat(p + "ffn_gate.weight"),
        u=Mat(p + "ffn_up.weight"), dn=Mat(p + "ffn_down.weight")))
onorm = deq("output_norm.weight")

res = {"model": model.split("/")[-1], "kv_cache": "numpy float64 twin (Q8_0 K/V, Q8_1 activations)", "prompts": []}
src = json.load(open(f"tools/engine/tests/data/oracle-{'q4_1' if 'Q4_1' in model else 'q8_0'}.json"))
for p in src["prompts"]:
    ids = p["ids"][:npos]
    kc = [np.zeros((0, NKV, D)) for _ in range(L)]
    vc = [np.zeros((0, NKV, D)) for _ in range(L)]
    top1, top8 = [], []
    for pos, tok in enumerate(ids):
        x = emb_f[tok].reshape(1, H)
        for li, l in enumerate(layers):
            xn = rmsnorm(x, l["an"])
            q = rope(l["q"](xn).reshape(NH, D), pos)
            k = rope(l["k"](xn).reshape(NKV, D), pos)
            v = l["v"](xn).reshape(NKV, D)
            kc[li] = np.concatenate([kc[li], q8_roundtrip(k.astype(np.float32))[None]])
            vc[li] = np.concatenate([vc[li], q8_roundtrip(v.astype(np.float32))[None]])
            att = np.empty((NH, D))
            g = NH // NKV
            for h in range(NH):
                kv = h // g
                s = kc[li][:, kv, :] @ q[h] / np.sqrt(D)
                w = np.exp(s - s.max()); w /= w.sum()
                att[h] = w @ vc[li][:, kv, :]
            h1 = x + l["o"](att.reshape(1, H))
            xn = rmsnorm(h1, l["fn"])
            gt, up = l["g"](xn), l["u"](xn)
            ff = gt / (1 + np.exp(-gt)) * up
            x = h1 + l["dn"](ff)
        logits = emb(rmsnorm(x, onorm))[0]
        order = np.argsort(-logits, kind="stable")[:8]
        top1.append(int(order[0]))
        top8.append([[int(i), float(logits[i])] for i in order])
    res["prompts"].append({"text": p["text"], "ids": ids, "top1": top1, "top8": top8})
    print(f"prompt: {len(ids)} positions", file=sys.stderr)
json.dump(res, open(out, "w"))
