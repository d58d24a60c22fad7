#!/usr/bin/env python3
"""Draws bench/results/gemv-t1-h200-2026-12-01.md's table: one-token GEMVs on the H200 with the
previous routes, the new routes, llama.cpp, and what a kernel that only reads the same bytes takes
(bench/read_roofline.py), each as % of the copy floor. Usage: gemv_t1_chart.py OUT.png"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from floor_bars import floor_bars  # noqa: E402

# case: (before us, now us, llama.cpp us, pure read us, floor us, goal us or None); H200.
ROWS = {
    "Q8_0 14336x4096": (17.23, 15.56, 22.95, 15.88, 14.79, 16.5),
    "Q8_0 4096x4096": (6.95, 5.88, 8.62, 5.94, 4.23, 5.0),
    "Q8_0 +res 4096x14336": (18.54, 16.74, None, 15.88, 14.79, None),
    "Q8_0 +res 4096x4096": (7.01, 5.85, None, 5.94, 4.23, None),
    "Q4_0 14336x4096": (10.09, 10.08, 16.91, 9.33, 7.84, 1.15 * 7.84),
    "Q4_1 14336x4096": (10.51, 10.47, 14.90, 10.23, 8.71, 1.15 * 8.71),
}
series = [
    ("kiln, previous routes", 0, "#ffa94d"),
    ("kiln, new routes", 1, "#d9480f"),
    ("llama.cpp (incl. its quantize)", 2, "#1c7ed6"),
    ("a kernel that only reads the bytes (Triton)", 3, "#868e96"),
]
fig, ax = plt.subplots(figsize=(11, 4.8))
w = 0.2
cases = floor_bars(ax, ROWS, series, 4, w, "{:.2f}")
for j, c in enumerate(cases):
    goal = ROWS[c][5]
    if goal:
        y = 100.0 * ROWS[c][4] / goal
        ax.plot([j - 2 * w, j + 2 * w], [y, y], color="k", lw=1.5)
ax.plot([], [], color="k", lw=1.5, label="issue 12's goal")
ax.axhline(100, color="k", ls="--", lw=1, label="floor: bytes / copy bandwidth")
ax.set_xticks(range(len(cases)))
ax.set_xticklabels(cases, fontsize=8)
ax.set_ylabel("% of the floor (labels: us a call)")
ax.set_ylim(0, 125)
ax.set_title("One-token GEMV on an H200 (graph replay, weights rotated over > L2)")
ax.legend(fontsize=8, loc="upper center", ncol=3)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=110)
