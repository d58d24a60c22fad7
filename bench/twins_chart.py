#!/usr/bin/env python3
"""Draws the early twins' results (bench/results/magic-h200-2026-12-04/): left, SmolLM2-shaped
decode tokens/s against position (call 4: Q4_1 with no early twin, Q4_1 and Q8_0 with the
routes, llama-bench's tg128 at depth 0 / 512 / 2048 in the same call, and 2x llama-bench, the
engine issue's goal); right, the Q4_1 step's graph replay with each early twin alone and
together (call 3).

    python3 bench/twins_chart.py bench/results/magic-h200-2026-12-04 docs/img/twins-h200.png
"""
import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TAGS = ["short", "mid", "long"]


def load(path):
    d = json.loads(path.read_text())
    return d["profile"]["position"], d["profile"]["replay_us"], d["decode_tokens_per_s"]


def llama(path):
    """tg128 tokens/s by depth from a llama-bench markdown table."""
    out = {}
    for line in path.read_text().splitlines():
        m = re.search(r"tg128(?: @ d(\d+))? \|\s+([\d.]+)", line)
        if m:
            out[int(m.group(1) or 0)] = float(m.group(2))
    return out


def main():
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    c3, c4 = root / "call3", root / "call4"
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.8))
    for model, mark in (("q4_1", "o"), ("q8_0", "s")):
        short = model[:2]
        lb = llama(c4 / f"llama-bench-rs-{model}.md")
        depths = sorted(lb)
        ax.plot(depths, [lb[d] for d in depths], mark + ":", color="gray",
                label=f"llama-bench {model.upper()} (tg128 at depth)")
        ax.plot(depths, [2 * lb[d] for d in depths], "--", color="red" if model == "q4_1" else "salmon",
                lw=0.8, label=f"goal: 2x llama-bench {model.upper()}")
        for run, style, what in (("none", "-.", "no early twin"), ("2", "-", "routes")):
            if model == "q8_0" and run == "none":
                continue
            pts = []
            for tag in TAGS:
                pos, _, tps = load(c4 / f"prof-{short}-{tag}-{run}.json")
                pts.append((pos, tps))
            ax.plot([p for p, _ in pts], [t for _, t in pts], mark + style,
                    label=f"kiln {model.upper()}, {what}")
    ax.set_xlabel("position (kiln) / depth (llama-bench)")
    ax.set_ylabel("decode tokens/s (batch 1)")
    ax.set_title("SmolLM2-135M shape on the H200 (call 4)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    configs = [("A", "none"), ("B", "residual"), ("C", "gate/up"), ("D", "Q/K/V"), ("E", "all three")]
    width = 0.16
    for i, (k, label) in enumerate(configs):
        ys = [load(c3 / f"prof-q4-{tag}-{k}.json")[1] for tag in TAGS]
        xs = [j + (i - 2) * width for j in range(len(TAGS))]
        bx.bar(xs, ys, width, label=label)
    pos = [load(c3 / f"prof-q4-{tag}-A.json")[0] for tag in TAGS]
    bx.set_xticks(range(len(TAGS)), [f"{p} positions" for p in pos])
    bx.set_ylim(400, 680)
    bx.set_ylabel("Q4_1 step, graph replay (us)")
    bx.set_title("which early twin (call 3): routed = residual + Q/K/V")
    bx.grid(axis="y", alpha=0.3)
    bx.legend(fontsize=8, title="early twin", title_fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
