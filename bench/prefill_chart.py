#!/usr/bin/env python3
"""Draws the prompt-attention figures of bench/results/prefill-kb32-h200-2026-12-05/: TFLOP/s
against L (32 q / 8 kv heads, head dim 128, causal) for kiln's wide variants and torch SDPA
(bf16, flash), f16 and Q8_0 caches side by side, with the issue's goals (0.6x SDPA with an
f16 cache, 0.5x with int8 / Q8_0) and the routed choice (`LONG_CHUNK`) drawn thick.

kiln's times: `kiln bench --json` of call 3 (L = 512 .. 8192; call 1's L = 512, 2048, 8192
where call 3 did not run; the mean of the medians of orders A and B where both ran), and call 1's 16-key package (`old16`, the order of 2026-12-04: `w4g` / `w4qs`,
L = 512, 2048, 8192) for the step the 32-key softmax block made; SDPA from
`bench/prefill_peers.py` of each call that ran it (the median over calls).

Usage: bench/prefill_chart.py RESULTS_DIR OUT.png"""
import glob
import json
import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NQ, D = 32, 128
LS = [512, 1024, 2048, 4096, 8192]
CASE = {512: "l512", 1024: "l1k", 2048: "l2k", 4096: "l4k", 8192: "l8k"}
LONG_CHUNK = 1536  # specs/src/attention/prefill/mod.rs
ROUTE = {"f16": ("w4gx", "w4gxa"), "q8_0": ("w4gx", "w4qsxc")}
SERIES = {"f16": [("w4gxa", "o-", "tab:blue"), ("w4gx", "s-", "tab:green"),
                  ("w4g", "^--", "tab:purple")],
          "q8_0": [("w4qsxc", "o-", "tab:blue"), ("w4qsx", "d-", "tab:orange"),
                   ("w4gx", "s-", "tab:green"), ("w4qs", "^--", "tab:purple")]}


def flops(l):
    return 4 * NQ * D * l * (l + 1) // 2


def times(paths, cache, l, variant):
    """The mean of the graph medians of `variant` at L over the bench JSONs given."""
    xs = []
    for p in paths:
        c = json.load(open(p))["cases"].get(f"prefill_{cache}_{CASE[l]}")
        v = c and c["variants"].get(variant)
        if v:
            xs.append(v["graph_us"])
    return statistics.mean(xs) if xs else None


def sdpa_us(root, l):
    xs = []
    for p in sorted(glob.glob(os.path.join(root, "call*", "sdpa.json"))):
        v = json.load(open(p)).get(f"sdpa_flash_bf16_causal_l{l}")
        if v:
            xs.append(v["us"])
    return statistics.median(xs) if xs else None


def kiln_line(ax, paths, cache, pick, fmt, label, **style):
    """kiln's TFLOP/s at each L where `paths` time the variant `pick(L)`."""
    pts = [(l, t) for l in LS if (t := times(paths, cache, l, pick(l)))]
    if pts:
        ax.plot([l for l, _ in pts], [flops(l) / t / 1e6 for l, t in pts], fmt, label=label,
                **style)


def main():
    root, out = sys.argv[1], sys.argv[2]
    sdpa = {l: us for l in LS if (us := sdpa_us(root, l))}
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.6), sharey=True)
    for ax, cache, goal in zip(axes, ["f16", "q8_0"], [0.6, 0.5]):
        tag = "f16" if cache == "f16" else "q8"
        new = (sorted(glob.glob(os.path.join(root, "call3", f"bench-{tag}-[ab].json")))
               or sorted(glob.glob(os.path.join(root, "call1", f"bench-{tag}-new-[ab].json"))))
        old = sorted(glob.glob(os.path.join(root, "call1", f"bench-{tag}-old-[ab].json")))
        sd = {l: flops(l) / us / 1e6 for l, us in sdpa.items()}
        ax.plot(list(sd), list(sd.values()), "k-", lw=2, label="torch SDPA bf16 (flash)")
        if 2048 in sd:
            ax.plot([2048], [goal * sd[2048]], "k*", ms=13, label=f"goal at L = 2048: {goal}x SDPA")
        short, long_ = ROUTE[cache]
        kiln_line(ax, new, cache, lambda l: long_ if l >= LONG_CHUNK else short, "-",
                  "kiln routed", color="tab:red", lw=4, alpha=0.35)
        for name, fmt, color in SERIES[cache]:
            kiln_line(ax, new, cache, lambda _, n=name: n, fmt, f"kiln {name}", color=color)
        first = "w4g" if cache == "f16" else "w4qs"
        kiln_line(ax, old, cache, lambda _: first, "x:",
                  f"kiln {first}, 16-key blocks (2026-12-04)", color="tab:gray")
        ax.set_xscale("log", base=2)
        ax.set_xticks(LS, [str(l) for l in LS])
        ax.set_xlabel("L (query rows = keys, causal)")
        ax.set_title(f"{cache} cache, 32 q / 8 kv heads, head dim 128")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper left")
    axes[0].set_ylabel("TFLOP/s (4 n_q D L (L+1) / 2 FLOPs)")
    fig.suptitle("attention_prefill on the H200 (2026-12-05, graph replay medians)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
