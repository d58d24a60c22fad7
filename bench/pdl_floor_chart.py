#!/usr/bin/env python3
"""Draws bench/probes/pdl_floor.cu's output beside kiln's GEMVs of the same bytes from the same
call: for each size, us a launch of each probe mode (a kernel that only streams the weights,
replayed against itself; with several logs, the median and the spread as an error bar), then
the named kiln variants from `kiln bench --json`, and the floor (bytes / the call's copy
bandwidth) as a line.

Usage: bench/pdl_floor_chart.py OUT.png TITLE BENCH.json CASE=VARIANT[,..] PROBE.log [PROBE.log ...]
e.g. (bench/results/pdl-floor-2026-12-07, the forty-seventh session's H100 call):
  R=bench/results/pdl-floor-2026-12-07/c2
  bench/pdl_floor_chart.py docs/img/pdl-floor-h100.png "TITLE" $R/gemv.json \\
      gemv_q8_0_rp_n4096_t1=tuned_t1_nlo,gemv_q8_0_rp_k4_n4096_t8=wide_t1_g4_w8 \\
      $R/pdl-1.log $R/pdl-2.log"""
import json
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LINE = re.compile(r"^\s*([\d.]+) MB\s+\d+ blocks\s+(.+?)\s+([\d.]+) us\s+[\d.]+ GB/s$")


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    out, title, bench, picks, logs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    runs = {}  # (MB, mode) -> [us]
    for log in logs:
        with open(log) as fh:
            for line in fh:
                m = LINE.match(line)
                if m:
                    runs.setdefault((float(m[1]), m[2]), []).append(float(m[3]))
    if not runs:
        sys.exit(f"no probe lines in {', '.join(logs)}")
    with open(bench) as fh:
        b = json.load(fh)
    gbps = b["bandwidth_gbps"]
    sizes = sorted({s for s, _ in runs})
    groups = []  # (label, [(name, median, lo, hi, is_kiln)], floor)
    for mb in sizes:
        bars = []
        for (s, mode), v in runs.items():
            if s == mb:
                med = statistics.median(v)
                bars.append((f"probe {mode}", med, med - min(v), max(v) - med, False))
        for pick in picks.split(","):
            case, variant = pick.split("=")
            c = b["cases"][case]
            if abs(c["bytes"] / 1e6 - mb) / mb > 0.02:
                continue
            us = c["variants"][variant]["graph_us"]
            bars.append((f"kiln {case.replace('gemv_q8_0_rp_', '')} {variant}", us, 0, 0, True))
        groups.append((f"{mb:.2f} MB", bars, mb * 1e6 / (gbps * 1e3)))
    fig, axes = plt.subplots(1, len(groups), figsize=(6 * len(groups), 5), squeeze=False)
    for ax, (label, bars, floor) in zip(axes[0], groups):
        xs = range(len(bars))
        ax.bar(xs, [b[1] for b in bars], yerr=[[b[2] for b in bars], [b[3] for b in bars]],
               color=["#d62728" if b[4] else "#1f77b4" for b in bars], edgecolor="black", linewidth=0.4)
        for x, bar in zip(xs, bars):
            ax.text(x, bar[1], f"{bar[1]:.2f}", ha="center", va="bottom", fontsize=8)
        ax.axhline(floor, color="black", linestyle="--", linewidth=1)
        ax.text(len(bars) - 0.5, floor, f"floor {floor:.2f}", ha="right", va="bottom", fontsize=8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([b[0] for b in bars], rotation=30, ha="right", fontsize=7)
        ax.set_title(label)
        ax.set_ylabel("us a launch (graph replay, median)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
