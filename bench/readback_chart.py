#!/usr/bin/env python3
"""Draws the twenty-fourth session's H200 figures (bench/results/readback-h200-2026-12-04/):
SmolLM2-shaped decode tokens/s against the position with the tokens read in place (call 5) and
copied after each step (call 5 at ~2013 positions, call 4's `head` package at ~173 and ~2013),
twice llama.cpp's llama-bench tg128 at depths 0, 512 and 2048 of the same call; and the step as
decode replays it at ~2013 positions (replay, `pos` moving, the token read back) for both.

Usage: bench/readback_chart.py RESULTS_DIR OUT.png"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from kiln_profile import load  # noqa: E402
from llama_bench import draw_tokens_panel  # noqa: E402


def main():
    root, png = sys.argv[1], sys.argv[2]
    c5 = os.path.join(root, "call5")
    c4 = os.path.join(root, "call4")
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    for ax, (model, short) in zip(axes[:2], [("q4_1", "q4"), ("q8_0", "q8")]):
        pts = [load(os.path.join(c5, f"prof-{short}-{p}.json")) for p in ["short", "mid", "long"]]
        xs = [p[0]["position"] for p in pts]
        ax.plot(xs, [p[1] for p in pts], "o-", color="C2", label="kiln, tokens read in place (call 5)")
        copy = load(os.path.join(c5, f"prof-{short}-long-copy.json"))
        ax.plot([copy[0]["position"]], [copy[1]], "s", color="C3", label="kiln, a copy after each step (call 5)")
        head = [load(os.path.join(c4, f"prof-{short}-{p}-head.json")) for p in ["short", "long"]]
        ax.plot([h[0]["position"] for h in head], [h[1] for h in head], "x--", color="C7",
                label="kiln, session start's package, copy (call 4)")
        draw_tokens_panel(ax, os.path.join(c5, f"llama-bench-rs-{model}.md"),
                          f"SmolLM2-135M shape, {model.upper()}, H200", "llama-bench tg128 (call 5)")
    ax = axes[2]
    labels, groups = [], []
    for short in ["q4", "q8"]:
        for kind, name in [("copy", f"prof-{short}-long-copy.json"), ("in place", f"prof-{short}-long.json")]:
            p, _ = load(os.path.join(c5, name))
            labels.append(f"{short.upper()} {kind}")
            groups.append([p["replay_us"], p["replay_pos_moving_us"], p["replay_decoding_us"],
                           p["wall_us_per_token"]])
    names = ["replay, same pos", "pos moving", "+ token read back", "wall a token"]
    w = 0.2
    for j, n in enumerate(names):
        ax.bar([i + (j - 1.5) * w for i in range(len(labels))], [g[j] for g in groups], w, label=n)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    lo = min(min(g) for g in groups)
    ax.set_ylim(lo - 15, max(max(g) for g in groups) + 5)
    ax.set_ylabel("us a step at ~2013 positions")
    ax.set_title("The step as decode replays it (call 5)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
