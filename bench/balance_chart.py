#!/usr/bin/env python3
"""Draws the fifteenth session's H200 measurements of the matrix-unit Q8_0 GEMV and the async
copies (bench/results/balance-h200-2026-12-03/): left, `wide_t2_g4`'s throughput against the
warps an SM holds (N = 12672 / 14336 / 16896: 396, 448 and 528 workgroups of four warps, up to
four an SM; and the 12 warps of the 160-register build at N = 14336), T = 1 and 8; middle,
N = 4096 (T = 1, 8) with the routed `wide_t2_g4`, the pipelined `wide_t1_g2p` and the async
`wide_t1_a3`; right, decode attention at 32K keys (Q8_0, head dim 128) with `r8`, `r8a` (its K
chunks by async copies) and `r4t256`. Every point the median of the call's two runs (opposite
variant orders).

Usage: bench/balance_chart.py RESULTS_DIR OUT.png"""
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def runs(root, call, stem):
    out = []
    for ab in ("a", "b"):
        with open(os.path.join(root, call, f"{stem}-{ab}.json")) as fh:
            out.append(json.load(fh)["cases"])
    return out


def med(rs, case, variant):
    return statistics.median(r[case]["variants"][variant]["graph_us"] for r in rs)


def bars(ax, group, vals, colors, fmt):
    """Bars `vals` of group `group` (four slots a group), each with its value on top."""
    xs = [group * 4 + j for j in range(len(vals))]
    for b, v in zip(ax.bar(xs, vals, color=colors), vals):
        ax.text(b.get_x() + b.get_width() / 2, v, fmt.format(v), ha="center", va="bottom",
                fontsize=7)


def main():
    root, out = sys.argv[1], sys.argv[2]
    c1 = runs(root, "call1", "bench")
    c2 = runs(root, "call2", "bench")
    c4 = runs(root, "call4", "bench")
    c4a = runs(root, "call4", "bench-attn")
    fig, ax = plt.subplots(1, 3, figsize=(16, 4.8))

    # Left: TB/s against warps an SM.
    for t, mark in ((1, "o"), (8, "s")):
        xs, ys = [], []
        for n, wgs in ((12672, 396), (14336, 448), (16896, 528)):
            case = f"gemv_q8_0_rp_k4_n{n}_t{t}"
            us = med(c1, case, "wide_t2_g4")
            xs.append(4 * wgs / 132)
            ys.append(c1[0][case]["bytes"] / us / 1e6)
        ax[0].plot(xs, ys, marker=mark, label=f"wide_t2_g4, 128 registers, T = {t}")
        case = f"gemv_q8_0_rp_k4_n14336_t{t}"
        us = med(c2, case, "wide_t2_g4_c255")
        ax[0].plot([4 * 448 / 132 * 12 / 16], [c2[0][case]["bytes"] / us / 1e6], marker=mark,
                   linestyle="none", color="red",
                   label=f"160 registers (12 warps at most), N = 14336, T = {t}")
    ax[0].set_xlabel("warps an SM (workgroups x 4 / 132 SMs)")
    ax[0].set_ylabel("TB/s (bytes / graph time)")
    ax[0].set_title("k4 GEMV: time follows the warps an SM holds")
    ax[0].legend(fontsize=7)
    ax[0].grid(alpha=0.3)

    # Middle: N = 4096.
    names = ["wide_t2_g4", "wide_t1_g2p", "wide_t1_a3"]
    for i, t in enumerate((1, 8)):
        case = f"gemv_q8_0_rp_k4_n4096_t{t}"
        bars(ax[1], i, [med(c4, case, v) for v in names], ["C0", "C1", "C3"], "{:.2f}")
    ax[1].axhline(5.0, color="k", linestyle=":", label="issue goal T = 1 (5.0 us)")
    ax[1].axhline(5.5, color="gray", linestyle=":", label="issue goal T = 8 (5.5 us)")
    ax[1].set_xticks([1, 5], ["N = 4096, T = 1", "N = 4096, T = 8"])
    ax[1].set_ylabel("us (graph replay, median)")
    ax[1].set_title("blue wide_t2_g4, orange wide_t1_g2p (routed), red wide_t1_a3 (async)")
    ax[1].title.set_fontsize(8)
    ax[1].legend(fontsize=7)

    # Right: attention at 32K.
    vs = ["r8", "r8a", "r4t256"]
    for i, t in enumerate((1, 4, 8)):
        case = f"attn_q8_0_ctx32k_t{t}"
        bars(ax[2], i, [med(c4a, case, v) for v in vs], ["C0", "C2", "C4"], "{:.0f}")
    ax[2].set_xticks([1, 5, 9], ["32K, T = 1", "32K, T = 4", "32K, T = 8"])
    ax[2].set_ylabel("us (graph replay, median)")
    ax[2].set_title("decode attention Q8_0 d128: blue r8, green r8a (async K), purple r4t256")
    ax[2].title.set_fontsize(8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
