#!/usr/bin/env python3
"""Draws the sixteenth session's H200 measurements (bench/results/tail-h200-2026-12-03/): left,
the Q8_0 residual GEMV at one token (N = 4096, K = 4096 and 14336) without the norm tail, with
it (the route and the tuned variant; call 1 one counter, call 2 the slot counters), and the
`_res` GEMV plus a `rmsnorm_q8_1s_f32` node; middle, the decode steps' replay with the norms as
nodes (or folded) and in the tails; right, decode attention (Q8_0, head dim 128, 32 q / 8 kv)
routed after the re-tune against torch SDPA (bf16), call 3.

Usage: bench/tail_chart.py RESULTS_DIR OUT.png"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def cases(path):
    with open(path) as fh:
        return json.load(fh)["cases"]


def us(c, case, variant):
    return c[case]["variants"][variant]["graph_us"]


def replay(path):
    with open(path) as fh:
        m = re.search(r"graph replay on the device ([0-9.]+) us", fh.read())
    return float(m.group(1))


def label(ax, bars):
    for b in bars:
        v = b.get_height()
        ax.text(b.get_x() + b.get_width() / 2, v, f"{v:.1f}", ha="center", va="bottom", fontsize=7)


def main(root, out):
    c1 = cases(os.path.join(root, "call1", "bench-res-full4.json"))
    c2 = cases(os.path.join(root, "call2", "bench-res.json"))
    norm = us(c2, "rmsnorm_q8_1s_t8_d4096", "baseline")
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))

    ax = axes[0]
    groups = [("K = 4096", "k4096", "p1u16w4", "tuned_t1_klo"),
              ("K = 14336", "k14336", "p1u16w2", "tuned_t1_khi")]
    series = [("res GEMV, no norm", "#4c72b0"), ("res GEMV + rmsnorm node", "#8da0cb"),
              ("tail, route, one counter (call 1)", "#dd8452"),
              ("tail, route, slot counters (call 2)", "#c44e52"),
              ("tail, tuned p2 r1 u1 w8 (call 2)", "#55a868")]
    for gi, (name, k, route, tuned) in enumerate(groups):
        res = f"gemv_q8_0_rp_res_n4096_{k}_t1"
        tail = f"gemv_q8_0_rp_res_rmsnorm_n4096_{k}_t1"
        vals = [us(c2, res, route), us(c2, res, route) + norm, us(c1, tail, route),
                us(c2, tail, route), us(c2, tail, tuned)]
        for j, (v, (lab, col)) in enumerate(zip(vals, series)):
            label(ax, ax.bar(gi * 6 + j, v, color=col, label=lab if gi == 0 else None))
    ax.set_xticks([2, 8], [g[0] for g in groups])
    ax.set_ylabel("us (graph replay, N = 4096, T = 1)")
    ax.set_title("residual GEMV with the norm in its tail")
    ax.legend(fontsize=7, loc="upper left")

    ax = axes[1]
    steps = [("Llama-3-8B Q8_0", "prof-r8b-apart.log", "prof-r8b-residual.log", "apart"),
             ("SmolLM2 Q4_1", "prof-rs-auto.log", "prof-rs-residual.log", "folded")]
    for gi, (name, a, r, how) in enumerate(steps):
        va = replay(os.path.join(root, "call2", a))
        vr = replay(os.path.join(root, "call2", r))
        first = gi == 0
        label(ax, ax.bar(gi * 3, 1.0, color="#4c72b0", label="norms apart / folded" if first else None))
        label(ax, ax.bar(gi * 3 + 1, vr / va, color="#c44e52", label="norms in the tails" if first else None))
        ax.text(gi * 3, 0.5, f"{va:.0f} us", ha="center", fontsize=8, color="white")
        ax.text(gi * 3 + 1, 0.5, f"{vr:.0f} us", ha="center", fontsize=8, color="white")
    ax.set_xticks([0.5, 3.5], [s[0] for s in steps])
    ax.set_ylabel("step replay, relative to the engine's choice")
    ax.set_title("decode step (call 2)")
    ax.legend(fontsize=7, loc="upper left")

    ax = axes[2]
    c3 = cases(os.path.join(root, "call3", "bench-attn.json"))
    with open(os.path.join(root, "call3", "sdpa.json")) as fh:
        sdpa = json.load(fh)
    names = [("4K T=1", "attn_q8_0_ctx4k_t1", "sdpa_bf16_ctx4096_t1"),
             ("4K T=4", "attn_q8_0_ctx4k_t4", "sdpa_bf16_ctx4096_t4"),
             ("4K T=8", "attn_q8_0_ctx4k_t8", "sdpa_bf16_ctx4096_t8"),
             ("32K T=1", "attn_q8_0_ctx32k_t1", "sdpa_bf16_ctx32768_t1"),
             ("32K T=4", "attn_q8_0_ctx32k_t4", "sdpa_bf16_ctx32768_t4"),
             ("32K T=8", "attn_q8_0_ctx32k_t8", "sdpa_bf16_ctx32768_t8")]
    sd = {k: v["us"] for k, v in sdpa.items()}
    for i, (lab, case, peer) in enumerate(names):
        best = min(v["graph_us"] for v in c3[case]["variants"].values())
        label(ax, ax.bar(i * 3, best, color="#4c72b0", label="kiln (fastest timed)" if i == 0 else None))
        label(ax, ax.bar(i * 3 + 1, sd[peer], color="#999999", label="torch SDPA bf16" if i == 0 else None))
    ax.set_yscale("log")
    ax.set_xticks([i * 3 + 0.5 for i in range(len(names))], [n[0] for n in names], fontsize=8)
    ax.set_ylabel("us (graph replay)")
    ax.set_title("decode attention, Q8_0 cache (call 3)")
    ax.legend(fontsize=7, loc="upper left")

    fig.suptitle("H200, 2026-12-03 (bench/results/tail-h200-2026-12-03.md)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
