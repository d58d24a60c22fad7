#!/usr/bin/env python3
"""Draws bench/results/i8-routes-h100-2026-12-06/: decode attention (Q8_0 cache, head dim 128,
32 q / 8 kv heads) on an H100, the i8 order's four variants (the route before, `mma`, in grey;
the new routes `mma8` / `mma8_lds` in colour) beside the f32 order's fastest variant, per case,
with the floor (K and V bytes once / copy bandwidth).

Usage: bench/i8_routes_chart.py RESULTS_DIR OUT.png"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = [("ctx4k_t8", "4K, T=8"), ("ctx32k_t1", "32K, T=1"), ("ctx32k_t4", "32K, T=4"),
         ("ctx32k_t8", "32K, T=8")]
I8 = [("mma", "#9e9e9e"), ("mma_lds", "#cfcfcf"), ("mma8", "#1f77b4"), ("mma8_lds", "#2ca02c")]


def load(path):
    with open(path) as fh:
        return json.load(fh)["cases"]


def main():
    d, out = sys.argv[1], sys.argv[2]
    i8 = load(os.path.join(d, "i8-1.json"))
    f32 = load(os.path.join(d, "f32.json"))
    fig, ax = plt.subplots(figsize=(9, 4.2))
    width = 0.16
    for ci, (case, title) in enumerate(CASES):
        c = i8[f"attn_q8_0_i8_{case}"]
        for vi, (v, colour) in enumerate(I8):
            y = c["variants"][v]["graph_us"]
            x = ci + (vi - 2) * width
            ax.bar(x, y, width, color=colour, label=v if ci == 0 else None)
            ax.text(x, y, f"{y:.0f}", ha="center", va="bottom", fontsize=7)
        g = f32[f"attn_q8_0_{case}"]["variants"]
        best = min(g, key=lambda v: g[v]["graph_us"])
        y = g[best]["graph_us"]
        x = ci + 2 * width
        ax.bar(x, y, width, color="#ff7f0e", label="f32 order, fastest" if ci == 0 else None)
        ax.text(x, y, f"{y:.0f}\n{best}", ha="center", va="bottom", fontsize=6)
        floor = c["floor_us"]
        ax.hlines(floor, ci - 2.5 * width, ci + 2.5 * width, colors="k", linestyles="dotted",
                  label="floor" if ci == 0 else None)
    ax.set_xticks(range(len(CASES)))
    ax.set_xticklabels([t for _, t in CASES])
    ax.set_ylabel("us (graph replay)")
    ax.set_title("Decode attention, Q8_0 K/V, 32 q / 8 kv, d 128, H100 (2026-12-06)")
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
