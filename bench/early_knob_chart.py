#!/usr/bin/env python3
"""Draws the early knob `e` of a `kiln tune` run of the dense GEMV: for each bucket, every
candidate's time grouped by its other knobs, one bar for each value of `e` (0: after the wait;
1: the first trips' weights held across it; 2: also the rest asked of L2 before it), with the
bucket's untuned default as a line. Reads the tuner's progress file (`tune-progress.jsonl`).

Usage: bench/early_knob_chart.py OUT.png TITLE PROGRESS.jsonl
e.g. (bench/results/h100-2026-12-07, the forty-fifth session):
  bench/early_knob_chart.py docs/img/early-knob-h100.png "TITLE" \\
      bench/results/h100-2026-12-07/c2/tuneF-progress.jsonl"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {0: "#9e9e9e", 1: "#1f77b4", 2: "#d62728"}


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    out, title, path = sys.argv[1:]
    times = {}  # bucket -> {(knobs without e) -> {e: us}}
    defaults = {}
    device = ""
    for line in open(path):
        d = json.loads(line)
        if d.get("kind") != "time":
            continue
        device = d["device"]
        m = re.fullmatch(r"cand_(.*)_e(\d)", d["variant"])
        if m is None:
            defaults[d["bucket"]] = (d["variant"], d["us"])
            continue
        times.setdefault(d["bucket"], {}).setdefault(m[1], {})[int(m[2])] = d["us"]
    buckets = sorted(times)
    fig, axes = plt.subplots(1, len(buckets), figsize=(7 * len(buckets), 4.5), squeeze=False)
    for ax, bucket in zip(axes[0], buckets):
        groups = sorted(times[bucket])
        for i, g in enumerate(groups):
            for e, us in sorted(times[bucket][g].items()):
                label = f"e={e}" if i == 0 else None
                ax.bar(i + (e - 1) * 0.27, us, 0.27, color=COLOURS.get(e, "k"), label=label)
        if bucket in defaults:
            name, us = defaults[bucket]
            ax.axhline(us, color="k", linestyle="--", linewidth=1, label=f"default {name}")
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([g.replace("_", " ") for g in groups], rotation=45, ha="right")
        ax.set_title(bucket)
        ax.set_ylabel("graph replay, us (median)")
        lo = min(min(v.values()) for v in times[bucket].values())
        ax.set_ylim(lo * 0.9, None)
        ax.legend(fontsize=8)
    fig.suptitle(f"{title}\n{device}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
