#!/usr/bin/env python3
"""SmolLM2-shaped decode tokens/s against position for two or more builds or routes timed in
one call, beside llama-bench on the same files in the same call (issue 16), from a call folder
like `bench/results/across-2026-12-05/call6` (`prof-{q4,q8}-{short,mid,long}[SUFFIX].json`,
`llama-bench-rs-{q4_1,q8_0}.md`). Each run is `SUFFIX=LABEL`; where a suffixed run has no file
at a position, the plain run's point stands for it (the call timed the same code there once).
The default runs are the thirty-second session's: the routes before `r1x` (plain) and `r1x`.

`LLAMA_DIR=D` in the environment takes llama-bench's files from folder D instead (a call right
after on the same machine, held between; the title says so).

Usage: bench/across_engine_chart.py CALL_DIR OUT.png [SUFFIX=LABEL ...]"""
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


DEFAULT_RUNS = (("", "kiln, the routes before"), ("-r1x", "kiln, `r1x` (now routed past 512)"))
STYLES = (("s-", "C3"), ("^-", "C1"), ("o-", "C2"), ("v-", "C4"))


def main(folder, out, runs=DEFAULT_RUNS):
    llama = os.environ.get("LLAMA_DIR", folder)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    for ax, (q, model) in zip(axes, (("q4", "q4_1"), ("q8", "q8_0"))):
        title = f"SmolLM2-135M shape, {model.upper()}"
        draw_tokens_panel(ax, f"{llama}/llama-bench-rs-{model}.md", title)
        for (suffix, label), (style, color) in zip(runs, STYLES):
            pts = []
            for tag in ("short", "mid", "long"):
                p = point(f"{folder}/prof-{q}-{tag}{suffix}.json")
                pts.append(p or point(f"{folder}/prof-{q}-{tag}.json"))
            pts = [p for p in pts if p]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=label)
        ax.legend(fontsize=7)
    with open(f"{folder}/env.log") as f:
        device = f.read().splitlines()[-1].split(",")[0]
    when = "same call" if llama == folder else "the next call on the same machine"
    fig.suptitle(f"Decode tokens/s on {device}: kiln (one CUDA graph a step) and llama-bench, {when}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    given = [tuple(a.split("=", 1)) for a in sys.argv[3:]]
    main(sys.argv[1], sys.argv[2], given or DEFAULT_RUNS)
