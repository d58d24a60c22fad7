#!/usr/bin/env python3
"""Draws bench/results/gemv-h200-2026-11-30.md's table (kiln, llama.cpp, cuBLAS bf16, floor) as a
PNG. Usage: gemv_chart.py OUT.png (the figures are the ones in the results file)."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from floor_bars import floor_bars  # noqa: E402

# case: (kiln us, llama.cpp us, cuBLAS bf16 us, floor us), H200, 2026-11-30, one run.
ROWS = {
    "Q8_0 14336 T=1": (17.06, 22.91, 31.37, 14.80),
    "Q8_0 14336 T=8": (27.65, 44.28, 31.00, 14.91),
    "Q8_0 4096 T=1": (7.47, 8.62, 13.91, 4.23),
    "Q8_0 4096 T=8": (12.48, 16.31, 13.85, 4.26),
    "Q4_0 14336 T=1": (10.22, 16.89, None, 7.84),
    "Q4_1 14336 T=1": (10.69, 14.86, None, 8.71),
    "bf16 14336 T=1": (41.51, 32.57, 31.37, 27.85),
    "MoE Qwen3 T=1": (5.38, 8.68, None, 3.18),
    "MoE Qwen3 T=8": (24.83, 32.81, None, 20.65),
    "MoE Mixtral T=8": (121.08, 241.63, None, 103.74),
}
series = [("kiln", 0, "#d9480f"), ("llama.cpp (incl. its quantize)", 1, "#1c7ed6"), ("cuBLAS bf16", 2, "#37b24d")]
fig, ax = plt.subplots(figsize=(11, 4.5))
# Percent of the floor (floor time / time): 100 is the copy bandwidth; labels give the us.
cases = floor_bars(ax, ROWS, series, 3, 0.26)
ax.axhline(100, color="k", ls="--", lw=1, label="floor: bytes / copy bandwidth (4219 GB/s)")
ax.set_xticks(range(len(cases)))
ax.set_xticklabels(cases, rotation=15, fontsize=8)
ax.set_ylabel("% of the floor (labels: us a call)")
ax.set_ylim(0, 110)
ax.set_title("GEMV on an H200, weights rotated over > L2 (K = 4096; MoE: 128 experts top-8, 768x2048)")
ax.set_ylim(0, 125)
ax.legend(fontsize=8, loc="upper center", ncol=4)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=110)
