#!/usr/bin/env python3
"""Draws bench/results/gemv-k4-h200-2026-12-01.md's tables (Q8_0 GEMV against T: kiln's dp4a family,
its matrix-unit family, llama.cpp, cuBLAS bf16, the floor) and the four-group variant of
bench/results/gemv-k4v-h200-2026-12-02.md as a PNG.
Usage: gemv_k4_chart.py OUT.png (the figures are the ones in the results file)."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# H200, 2026-12-01, one device call; us, graph replay (llama.cpp: its rotated peer-bench).
T = [1, 4, 8]
# First call: dp4a, wide on the repacked rows, 32-bit fragments; second call: the tile layout
# (its dp4a and llama.cpp figures in the same call agree with the first's within 0.2 us).
N14336 = {
    # 2026-12-02, another call (wide_t2_g1 there: 19.19 / 19.97 / 21.01; llama.cpp 22.95 /
    # 29.58 / 44.39).
    "kiln MMA, tile layout, 4 groups in flight (k4 wide_t2_g4, routed since 12-02)": [18.14, 19.05, 20.28],
    "kiln dp4a (gemv_q8_0_rp, routed)": [17.17, 23.68, 27.87],
    "kiln MMA, tile layout (k4 wide_t2_g1)": [19.18, 19.87, 20.94],
    "kiln MMA, repacked rows (k4 wide_t2_g1, before)": [24.78, 25.90, 27.61],
    "kiln MMA, 32-bit fragments (k4 mma, before)": [39.49, 44.99, 52.70],
    "llama.cpp (incl. its quantize)": [22.94, 29.17, 44.30],
    "floor": [15.03, 15.07, 15.13],
}
COLORS = ["#2b8a3e", "#d9480f", "#7048e8", "#da77f2", "#adb5bd", "#1c7ed6", "#000000"]


def main():
    fig, ax = plt.subplots(figsize=(12, 4.8))
    for (label, ys), color in zip(N14336.items(), COLORS):
        style = "--" if label == "floor" else "-o"
        ax.plot(T, ys, style, label=label, color=color)
    ax.axhline(30.98, color="#37b24d", linestyle=":", label="cuBLAS bf16 (T=8)")
    ax.plot([8], [18.0], "r*", markersize=12, label="issue 12's goal at T=8 (18 us)")
    ax.set_xlabel("tokens T")
    ax.set_ylabel("us (lower is better)")
    ax.set_xticks(T)
    ax.set_ylim(0, 56)
    ax.set_title("Q8_0 GEMV N=14336 K=4096 on the H200 (2026-12-01 and 12-02)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
