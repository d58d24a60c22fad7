#!/usr/bin/env python3
"""Draws bench/probes/read_paths.cu's output: for each size, GB/s of every read path (plain
16-byte loads, `cp.async` into shared memory, TMA bulk copies on an mbarrier), one bar a path;
with several logs of the same call (runs), each bar is their median and the spread an error bar.

Usage: bench/read_paths_chart.py OUT.png TITLE PROBE.log [PROBE.log ...]
e.g. (bench/results/held-2026-12-07, the forty-seventh session's H100 call):
  R=bench/results/held-2026-12-07/c1
  bench/read_paths_chart.py docs/img/read-paths-h100.png "TITLE" $R/probe-1.log $R/probe-2.log"""
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LINE = re.compile(r"^\s*([\d.]+) MiB\s+(.+?)\s+([\d.]+) us\s+([\d.]+) GB/s$")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, title, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
    runs = {}  # (size, path) -> [GB/s]
    for log in logs:
        with open(log) as fh:
            for line in fh:
                m = LINE.match(line)
                if m:
                    runs.setdefault((m[1], m[2]), []).append(float(m[4]))
    if not runs:
        sys.exit(f"no probe lines in {', '.join(logs)}")
    sizes = list(dict.fromkeys(s for s, _ in runs))
    paths = list(dict.fromkeys(p for _, p in runs))
    fig, ax = plt.subplots(figsize=(11, 5))
    width = 0.8 / len(paths)
    for i, path in enumerate(paths):
        xs, ys, lo, hi = [], [], [], []
        for j, size in enumerate(sizes):
            v = runs.get((size, path))
            if not v:
                continue
            med = statistics.median(v)
            xs.append(j + (i - (len(paths) - 1) / 2) * width)
            ys.append(med)
            lo.append(med - min(v))
            hi.append(max(v) - med)
        kind = path.split()[0]
        colour = {"ld16": "#1f77b4", "cp.async": "#2ca02c", "bulk": "#d62728"}.get(kind, "#9e9e9e")
        ax.bar(xs, ys, width, yerr=[lo, hi], label=path, color=colour,
               alpha=0.45 + 0.55 * (i + 1) / len(paths), edgecolor="black", linewidth=0.4)
        for x, y in zip(xs, ys):
            ax.text(x, y, f"{y:.0f}", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([f"{s} MiB a launch" for s in sizes])
    ax.set_ylabel("GB/s (graph of 20 launches, median)")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
