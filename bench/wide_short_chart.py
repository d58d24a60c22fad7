#!/usr/bin/env python3
"""Draws the eleventh session's H200 figure (bench/results/engine-h200-2026-12-02b/call3/):
SmolLM2's decode tokens/s against the position (the short prompt, it x10, it x41) as routed
(`short_r1` at ~173 positions, `short_r1t640` at ~587, `r1` at ~2013) and with `r1` forced at
~587, beside llama.cpp's llama-bench tg128 at depths 0, 512 and 2048 (and twice it: issue 16's
goal) from the same call.

Usage: bench/wide_short_chart.py CALL_DIR OUT.png"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from combine_chart import llama_bench  # noqa: E402


def load(path):
    with open(path) as fh:
        d = json.load(fh)
    return d["profile"]["position"], d["decode_tokens_per_s"]


def first(root, *names):
    for n in names:
        f = os.path.join(root, f"prof-{n}.json")
        if os.path.exists(f):
            return load(f)
    raise FileNotFoundError(names)


def main():
    root, png = sys.argv[1], sys.argv[2]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, model in zip(axes, ["q4_1", "q8_0"]):
        routed = [
            first(root, f"{model}-short"),
            first(root, f"{model}-long10-t640-1", f"{model}-long10-t640"),
            first(root, f"{model}-long41"),
        ]
        r1 = first(root, f"{model}-long10-r1-1", f"{model}-long10-r1")
        ax.plot([p[0] for p in routed], [p[1] for p in routed], "o-", color="C2",
                label="kiln, routed (short_r1t640 at ~587)")
        ax.plot([r1[0]], [r1[1]], "x", color="C7", markersize=10, label="kiln, r1 forced at ~587")
        lb = llama_bench(os.path.join(root, f"llama-bench-rs-{model}.md"))
        xs = sorted(lb)
        ax.plot(xs, [2 * lb[x] for x in xs], "s--", color="C3", label="2x llama-bench tg128")
        ax.plot(xs, [lb[x] for x in xs], "s:", color="C1", label="llama-bench tg128")
        ax.set_title(f"SmolLM2-135M shape, {model.upper()}: decode tokens/s (H200, one call)")
        ax.set_xlabel("position (kiln) / depth (llama-bench)")
        ax.set_ylabel("tokens/s")
        ax.set_ylim(0, None)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
