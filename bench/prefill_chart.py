#!/usr/bin/env python3
"""Draws the prompt-attention figures of bench/results/prefill-w4-h200-2026-12-02/: TFLOP/s
against L (32 q / 8 kv heads, head dim 128, causal) for kiln's baseline, pipe and wide
variants (w4, w4q) and torch SDPA (bf16, flash), f16 and Q8_0 caches side by side, with the
issue's goals (0.6x SDPA with an f16 cache, 0.5x with int8 / Q8_0).

kiln's times: `kiln bench --json` of each call (graph replay medians); the baseline and pipe
come from call 1, the routed wide variants (`w4g`, `w4qs`) from call 5; SDPA from
`bench/prefill_peers.py` of the calls that ran it (the median of their figures).

Usage: bench/prefill_chart.py RESULTS_DIR OUT.png"""
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NQ, D = 32, 128
LS = [512, 2048, 8192]
CASE = {512: "l512", 2048: "l2k", 8192: "l8k"}


def flops(l):
    return 4 * NQ * D * l * (l + 1) // 2


def style_axis(ax, title):
    """L on a log-2 axis at the bench's three L, the title, grid and legend."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(LS, [str(l) for l in LS])
    ax.set_xlabel("L (query rows = keys, causal)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")


def variant_us(root, call, cache, l, variant):
    path = os.path.join(root, call, "bench.json")
    if not os.path.exists(path):
        return None
    cases = json.load(open(path))["cases"]
    c = cases.get(f"prefill_{cache}_{CASE[l]}")
    v = c and c["variants"].get(variant)
    return v and v["graph_us"]


def sdpa_us(root, l):
    xs = []
    for call in sorted(os.listdir(root)):
        p = os.path.join(root, call, "sdpa.json")
        if os.path.exists(p):
            xs.append(json.load(open(p))[f"sdpa_flash_bf16_causal_l{l}"]["us"])
    return statistics.median(xs)


def main():
    root, out = sys.argv[1], sys.argv[2]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    series = [("baseline", "call1", "o--", "tab:gray"), ("pipe", "call1", "s--", "tab:olive"),
              ("w4g", "call5", "o-", "tab:blue"), ("w4qs", "call5", "^-", "tab:purple")]
    for ax, cache, goal in zip(axes, ["f16", "q8_0"], [0.6, 0.5]):
        sd = [flops(l) / sdpa_us(root, l) / 1e6 for l in LS]
        ax.plot(LS, sd, "k-", lw=2, label="torch SDPA bf16 (flash)")
        ax.plot(LS, [goal * x for x in sd], "k:", label=f"goal: {goal}x SDPA")
        for name, call, style, color in series:
            ys = [variant_us(root, call, cache, l, name) for l in LS]
            if all(ys):
                ax.plot(LS, [flops(l) / y / 1e6 for l, y in zip(LS, ys)], style, color=color,
                        label=f"kiln {name}")
        style_axis(ax, f"{cache} cache, 32 q / 8 kv heads, head dim 128")
    axes[0].set_ylabel("TFLOP/s (4 n_q D L (L+1) / 2 FLOPs)")
    fig.suptitle("attention_prefill on the H200 (2026-12-02, graph replay medians)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
