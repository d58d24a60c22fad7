#!/usr/bin/env python3
"""Draws every variant `kiln bench --json` timed at each case (graph replay, us), one bar a
variant, the router's choice of the package marked; with several files of the same package and
call (runs), each bar is their median and the runs' spread is drawn as an error bar. The files
may hold different cases (e.g. one bench command's runs for some cases, another's for others).

Usage: bench/variants_chart.py OUT.png TITLE BENCH.json [BENCH.json ...]
e.g. (bench/results/i8-async-2026-12-06, the forty-first session's `mma8a`):
  R=bench/results/i8-async-2026-12-06/cA
  bench/variants_chart.py docs/img/i8-async-h100.png "TITLE" $R/i8-V-1.json $R/i8-V-2.json"""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = ["#9e9e9e", "#2ca02c", "#1f77b4", "#ff7f0e", "#d62728", "#9467bd", "#8c564b"]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, title, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    runs = []
    for f in files:
        with open(f) as fh:
            runs.append(json.load(fh)["cases"])
    # The files may hold different cases (each a run of some of them): a case's first file is
    # its reference.
    first = {}
    for r in runs:
        for n in r:
            first.setdefault(n, r)
    names = sorted(first, key=lambda c: (c.split("_ctx")[0], len(c), c))
    variants = []
    for n in names:
        for v in first[n][n]["variants"]:
            if v not in variants:
                variants.append(v)
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(names)), 4.8))
    w = 0.8 / len(variants)
    labelled = set()
    for j, v in enumerate(variants):
        for i, n in enumerate(names):
            ts = [r[n]["variants"][v]["graph_us"] for r in runs if n in r and v in r[n]["variants"]]
            if not ts:
                continue
            t = statistics.median(ts)
            x = i - 0.4 + w * (j + 0.5)
            routed = first[n][n]["variant"] == v
            label = None if v in labelled else v
            labelled.add(v)
            ax.bar(x, t, w, color=COLOURS[j % len(COLOURS)], label=label,
                   edgecolor="black" if routed else None, linewidth=1.5 if routed else 0)
            if len(ts) > 1:
                ax.errorbar(x, t, yerr=[[t - min(ts)], [max(ts) - t]], color="black",
                            capsize=2, linewidth=0.8)
            ax.text(x, t, f"{t:.1f}", ha="center", va="bottom", fontsize=6.5, rotation=90)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([n.replace("attn_", "") for n in names], rotation=20, fontsize=8)
    ax.set_ylabel("us (graph replay, median)")
    ax.set_title(title + "\n(outlined: the package's route)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


if __name__ == "__main__":
    main()
