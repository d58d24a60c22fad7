#!/usr/bin/env python3
"""Draws the ninth session's H200 figures (bench/results/attn-combine-h200-2026-12-02/): SmolLM2's
decode tokens/s against the position (the short prompt, it x10, it x41) with package b (HEAD
before the batched combine) and a (with it), twice llama.cpp's llama-bench tg128 at depths 0,
512 and 2048 from call 1, and the attention node's time alone.

Usage: bench/combine_chart.py RESULTS_DIR OUT.png"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from llama_bench import tg128_by_depth  # noqa: E402

PROMPTS = ["short", "long10", "long41"]


def load(path):
    with open(path) as fh:
        d = json.load(fh)
    node = next(k for k in d["profile"]["kernels"] if k["kernel"].startswith("attention_decode"))
    return d["profile"]["position"], d["decode_tokens_per_s"], node["us"] / node["nodes"]


def llama(root, model):
    return tg128_by_depth(os.path.join(root, "call1", f"llama-bench-rs-{model}.md"))


def series(root, model, pkg):
    pts = []
    for p in PROMPTS:
        for name in [f"prof-{model}-{pkg}-{p}-1.json", f"prof-{model}-{pkg}-{p}.json"]:
            f = os.path.join(root, "call2", name)
            if os.path.exists(f):
                pts.append(load(f))
                break
    return pts


def main():
    root, png = sys.argv[1], sys.argv[2]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    for ax, model in zip(axes[:2], ["q4_1", "q8_0"]):
        for pkg, color, label in [("b", "C7", "b: before"), ("a", "C2", "a: batched combine")]:
            pts = series(root, model, pkg)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=f"kiln {label}")
        lb = llama(root, model)
        xs = sorted(lb)
        ax.plot(xs, [2 * lb[x] for x in xs], "s--", color="C3", label="2x llama-bench tg128 (call 1)")
        ax.plot(xs, [lb[x] for x in xs], "s:", color="C1", label="llama-bench tg128 (call 1)")
        ax.set_title(f"SmolLM2-135M shape, {model.upper()}: decode tokens/s (H200)")
        ax.set_xlabel("position (kiln) / depth (llama-bench)")
        ax.set_ylabel("tokens/s")
        ax.set_ylim(0, None)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    ax = axes[2]
    for pkg, color in [("b", "C7"), ("a", "C2")]:
        pts = series(root, "q4_1", pkg)
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "o-", color=color, label=f"package {pkg}")
    ax.set_title("attention node alone (us), Q4_1 model")
    ax.set_xlabel("position")
    ax.set_ylabel("us a call")
    ax.set_ylim(0, None)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
