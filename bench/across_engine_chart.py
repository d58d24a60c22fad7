#!/usr/bin/env python3
"""SmolLM2-shaped decode tokens/s against position with the attention node by the split across
two waves (`r1x`) and by the routes it replaced, beside llama-bench on the same files in the
same call (issue 16), from a call folder like `bench/results/across-2026-12-05/call6` (its script
`cF.sh`: `prof-{q4,q8}-{short,mid,long}[-r1x].json`, `llama-bench-rs-{q4_1,q8_0}.md`).

Usage: bench/across_engine_chart.py CALL_DIR OUT.png"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from llama_bench import draw_tokens_panel  # noqa: E402


def point(path):
    """(position, decode tokens/s) of a `kiln generate --profile --json`, or None if absent."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        j = json.load(f)
    return j["profile"]["position"], j["decode_tokens_per_s"]


def main(folder, out):
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    for ax, (q, model) in zip(axes, (("q4", "q4_1"), ("q8", "q8_0"))):
        title = f"SmolLM2-135M shape, {model.upper()}"
        draw_tokens_panel(ax, f"{folder}/llama-bench-rs-{model}.md", title)
        runs = (
            ("", "kiln, the routes before", "s-", "C3"),
            ("-r1x", "kiln, `r1x` (now routed past 512)", "^-", "C1"),
        )
        for suffix, label, style, color in runs:
            pts = [point(f"{folder}/prof-{q}-{tag}{suffix}.json") for tag in ("short", "mid", "long")]
            if suffix:
                # At ~173 positions `short_r1` keeps the route: the plain run is the routed one.
                pts[0] = point(f"{folder}/prof-{q}-short.json")
            pts = [p for p in pts if p]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label)
        ax.legend(fontsize=7)
    with open(f"{folder}/env.log") as f:
        device = f.read().splitlines()[-1].split(",")[0]
    fig.suptitle(f"Decode tokens/s on {device}: kiln (one CUDA graph a step) and llama-bench, same call")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
