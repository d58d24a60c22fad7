#!/usr/bin/env python3
"""Draws the twenty-fifth session's H200 figures (bench/results/l2-h200-2026-12-04/): SmolLM2-
shaped decode tokens/s against the position with only the step's modules loaded (`--kernels
used`, the default now) and with the whole library's (`--kernels all`), `--l2 keep` at ~2013,
and twice llama.cpp's llama-bench tg128 of the same call (call 5); and the step's replay at
~2013 positions by package / load and L2 plan across calls 2-5 (each call a fresh machine).

Usage: bench/l2_chart.py RESULTS_DIR OUT.png"""
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
    fig, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    for ax, model in zip(axes[:2], ["q4_1", "q8_0"]):
        for kind, color in [("used", "C2"), ("all", "C7")]:
            pts = [load(os.path.join(c5, f"prof-{model}-{p}-{kind}.json")) for p in ["short", "mid", "long"]]
            label = "kiln, the step's modules only" if kind == "used" else "kiln, the whole library loaded"
            ax.plot([p[0]["position"] for p in pts], [p[1] for p in pts], "o-", color=color, label=label)
        keep = load(os.path.join(c5, f"prof-{model}-long-used-keep.json"))
        ax.plot([keep[0]["position"]], [keep[1]], "s", color="C3", label="kiln, step's modules, --l2 keep")
        draw_tokens_panel(ax, os.path.join(c5, f"llama-bench-rs-{model}.md"),
                          f"SmolLM2-135M shape, {model.upper()}, H200 (call 5)")
    ax = axes[2]
    # (call, file stem, label): the ~2013-position replays, one bar each.
    runs = {
        "q4_1": [(2, "q4-long-off", "2 whole, off"), (2, "q4-long-stream", "2 whole, stream"),
                 (2, "q4-long-keep", "2 whole, keep"), (4, "q4-long-hist-1", "4 whole pkg"),
                 (4, "q4-long-small-1", "4 small pkg"), (4, "q4-long-small-keep", "4 small, keep"),
                 (5, "q4_1-long-all", "5 all"), (5, "q4_1-long-used", "5 used"),
                 (5, "q4_1-long-used-keep", "5 used, keep")],
        "q8_0": [(2, "q8-long-off", "2 whole, off"), (2, "q8-long-stream", "2 whole, stream"),
                 (2, "q8-long-keep", "2 whole, keep"), (4, "q8-long-hist-1", "4 whole pkg"),
                 (4, "q8-long-small-1", "4 small pkg"), (4, "q8-long-small-keep", "4 small, keep"),
                 (5, "q8_0-long-all", "5 all"), (5, "q8_0-long-used", "5 used"),
                 (5, "q8_0-long-used-keep", "5 used, keep")],
    }
    w = 0.4
    labels = [r[2] for r in runs["q4_1"]]
    for j, (model, color) in enumerate([("q4_1", "C1"), ("q8_0", "C4")]):
        ys = [load(os.path.join(root, f"call{c}", f"prof-{stem}.json"))[0]["replay_us"] for c, stem, _ in runs[model]]
        ax.bar([i + (j - 0.5) * w for i in range(len(ys))], ys, w, color=color, label=model.upper())
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylim(520, 600)
    ax.set_ylabel("step replay at ~2013 positions, us")
    ax.set_title("by call (fresh machine each), load and L2 plan")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
