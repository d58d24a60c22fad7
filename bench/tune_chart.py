#!/usr/bin/env python3
"""Draws the report table of a `kiln tune` log (default routes against the tuned winner, per
bucket) as a PNG. Usage: tune_chart.py TUNE.log [TUNE.log ...] OUT.png"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    """(family/bucket, default us, tuned us or None when the default wins) from the report."""
    out = []
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0] or cells[0] in ("family", "---"):
            continue
        m = re.search(r"([\d.]+) us$", cells[2])
        if not m:
            continue
        default = float(m.group(1))
        t = re.search(r"([\d.]+) us$", cells[3])
        out.append((f"{cells[0]}\n{cells[1]}", default, float(t.group(1)) if t else None))
    return out


def main():
    logs, png = sys.argv[1:-1], sys.argv[-1]
    data = [r for log in logs for r in rows(log)]
    fig, ax = plt.subplots(figsize=(max(8, len(data) * 0.55), 4.8))
    xs = range(len(data))
    ax.bar([x - 0.2 for x in xs], [d[1] for d in data], 0.4, label="default routes", color="#adb5bd")
    ax.bar(
        [x + 0.2 for x in xs],
        [d[2] if d[2] is not None else d[1] for d in data],
        0.4,
        label="tuned (grey hatch: the default already wins)",
        color=["#d9480f" if d[2] is not None else "#dee2e6" for d in data],
        hatch=[None if d[2] is not None else "//" for d in data],
    )
    for x, d in zip(xs, data):
        if d[2] is not None:
            ax.text(x + 0.2, d[2], f"{d[1] / d[2]:.2f}x", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([d[0] for d in data], rotation=90, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("us a call (graph replay, median; log scale)")
    ax.set_title("kiln tune on the H200 (sm_90): default against tuned, per bucket")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
