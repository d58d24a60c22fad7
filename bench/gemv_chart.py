#!/usr/bin/env python3
"""Draws bench/results/gemv-h200-2026-11-30.md's table (kiln, llama.cpp, cuBLAS bf16, floor) as a
PNG. Usage: gemv_chart.py OUT.png (the figures are the ones in the results file)."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# case: (kiln us, llama.cpp us, cuBLAS bf16 us, floor us), H200, 2026-11-30, one run.
ROWS = {
    "Q8_0 14336 T=1": (17.64, 22.81, 31.46, 14.82),
    "Q8_0 14336 T=8": (27.69, 45.48, 31.23, 14.92),
    "Q8_0 4096 T=1": (6.94, 8.56, 13.51, 4.23),
    "Q8_0 4096 T=8": (12.47, 16.23, 13.63, 4.27),
    "Q4_0 14336 T=1": (10.30, None, None, 7.85),
    "Q4_1 14336 T=1": (10.75, None, None, 8.72),
    "MoE Qwen3 T=1": (5.40, None, None, 3.18),
    "MoE Qwen3 T=8": (25.07, None, None, 20.67),
}
series = [("kiln", 0, "#d9480f"), ("llama.cpp (incl. its quantize)", 1, "#1c7ed6"), ("cuBLAS bf16", 2, "#37b24d")]
cases = list(ROWS)
fig, ax = plt.subplots(figsize=(11, 4.5))
w = 0.26
for i, (label, k, color) in enumerate(series):
    xs = [j + (i - 1) * w for j in range(len(cases))]
    ys = [ROWS[c][k] or 0 for c in cases]
    bars = ax.bar(xs, ys, w, label=label, color=color)
    for b, y in zip(bars, ys):
        if y:
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.1f}", ha="center", va="bottom", fontsize=7)
for j, c in enumerate(cases):
    f = ROWS[c][3]
    ax.plot([j - 1.5 * w, j + 1.5 * w], [f, f], "k--", lw=1, label="floor (bytes / copy bandwidth)" if j == 0 else None)
ax.set_xticks(range(len(cases)))
ax.set_xticklabels(cases, rotation=15, fontsize=8)
ax.set_ylabel("us per call (CUDA-graph replay, median)")
ax.set_title("GEMV on an H200, weights rotated over > L2 (K = 4096; MoE: 128 experts top-8, 768x2048)")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=110)
