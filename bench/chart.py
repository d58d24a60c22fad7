#!/usr/bin/env python3
"""Draws the speed table of a results JSON (kiln vs torch vs Triton, with the bandwidth floor) as a
PNG for the docs. Usage: chart.py RESULTS.json OUT.png"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

res = json.load(open(sys.argv[1]))
cases = list(res["cases"])
series = [("kiln", "kiln_us", "#d9480f"), ("torch", "torch_us", "#1c7ed6"), ("Triton (torch.compile)", "triton_us", "#37b24d")]
fig, ax = plt.subplots(figsize=(10, 4.5))
w = 0.26
for i, (label, key, color) in enumerate(series):
    xs = [j + (i - 1) * w for j in range(len(cases))]
    ys = [res["cases"][c].get(key) or 0 for c in cases]
    bars = ax.bar(xs, ys, w, label=label, color=color)
    for b, y in zip(bars, ys):
        if y:
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.1f}", ha="center", va="bottom", fontsize=7)
for j, c in enumerate(cases):
    f = res["cases"][c].get("floor_us")
    if f:
        ax.plot([j - 1.5 * w, j + 1.5 * w], [f, f], "k--", lw=1)
ax.set_xticks(range(len(cases)))
ax.set_xticklabels(cases, rotation=15, fontsize=8)
ax.set_ylabel("us per call (CUDA-graph replay, median)")
ax.set_title(f"{res.get('device', '')}, {res.get('date', '')}: lower is better; dashed = bandwidth floor")
ax.legend()
note = ("kiln: kiln bench (a bare process); torch, Triton: peers.py (a torch process; in such a process, ab.py's, "
        "kiln's own kernel runs ~0.35 us slower). Kernel vs kernel in one process: bench/ab.py, in the results file.")
fig.text(0.01, 0.01, note, fontsize=7, color="#555")
fig.tight_layout(rect=(0, 0.03, 1, 1))
fig.savefig(sys.argv[2], dpi=120)
