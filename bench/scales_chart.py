#!/usr/bin/env python3
"""Draws bench/results/scales-h200-2026-12-03.md: gemv_q8_0_rp_k4's routed variant at N = 14336
and 4096 against T, with the weight scales [row][block] (before) and by tile (after), beside
llama.cpp's MUL_MAT (its rotated peer-bench) and the floor, all from the results folder's JSON
and logs, plus the issue's goals.
Usage: scales_chart.py RESULTS_DIR OUT.png"""
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Before (scales [row][block]), the routed variants, from the results this file cites:
# N = 14336: bench/results/gemv-k4v-h200-2026-12-02.md (18.14 / 19.05 / 20.28) and
# tail-h200-2026-12-03.md (T = 8: 20.07-20.10); N = 4096: balance-h200-2026-12-03.md.
BEFORE = {14336: {1: 18.14, 4: 19.05, 8: 20.10}, 4096: {1: 8.15, 8: 9.47}}
GOALS = {14336: {8: 18.0}, 4096: {1: 5.0, 8: 5.5}}


def main():
    d, out = sys.argv[1], sys.argv[2]
    cases = json.load(open(os.path.join(d, "call3", "bench.json")))["cases"]
    peer = {}
    for line in open(os.path.join(d, "call3", "peer", "peer.txt")):
        m = re.search(r"MUL_MAT type=q8_0 m=(\d+) n=(\d+) k=4096 R=\d+ mode=rot .*us_per_op=([\d.]+)", line)
        if m:
            peer[(int(m[1]), int(m[2]))] = float(m[3])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    for ax, n in zip(axes, [14336, 4096]):
        ts, after, floor = [], [], []
        for name, c in sorted(cases.items()):
            m = re.fullmatch(rf"gemv_q8_0_rp_k4_n{n}_t(\d+)", name)
            if m:
                ts.append(int(m[1]))
                after.append(c["kiln_us"])
                floor.append(c["floor_us"])
        order = sorted(range(len(ts)), key=lambda i: ts[i])
        ts = [ts[i] for i in order]
        after = [after[i] for i in order]
        floor = [floor[i] for i in order]
        b = BEFORE[n]
        ax.plot(list(b), list(b.values()), "-o", color="#adb5bd", label="kiln k4, scales [row][block] (before)")
        ax.plot(ts, after, "-o", color="#2b8a3e", label="kiln k4, scales by tile (this call)")
        pt = sorted(k[1] for k in peer if k[0] == n)
        ax.plot(pt, [peer[(n, t)] for t in pt], "-s", color="#1c7ed6", label="llama.cpp MUL_MAT (same call)")
        ax.plot(ts, floor, "--", color="#000000", label="floor (bytes / copy bandwidth)")
        for t, g in GOALS[n].items():
            ax.plot([t], [g], "r*", markersize=12, label="issue 12's goal" if t == max(GOALS[n]) else None)
        ax.set_title(f"Q8_0 GEMV N={n} K=4096, H200")
        ax.set_xlabel("tokens T")
        ax.set_ylabel("us (lower is better)")
        ax.set_xticks(range(1, 9))
        ax.set_ylim(0, None)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
