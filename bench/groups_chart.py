#!/usr/bin/env python3
"""Draws the fourteenth session's H200 A/B of the decode attention's two-level combine
(bench/results/groups-h200-2026-12-03/call3/): left, the fastest of the timed variants (`r4t256`,
`r4`, `r8`; each variant's median of the call's two alternating runs) of each Q8_0 and f16
head-dim-128 case with one level (package o1: HEAD before the change) and two (package n3),
beside the bandwidth floor; right, SmolLM2-shaped
decode tokens/s (random weights, Q4_1 and Q8_0) at ~219, ~587 and ~2013 positions.

Usage: bench/groups_chart.py RESULTS_DIR OUT.png"""
import glob
import json
import os
import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = [f"attn_{c}_ctx{x}_t{t}" for c in ("q8_0", "f16") for x in ("4k", "32k") for t in (1, 4, 8)]


def fastest(root, pkg):
    """{case: (variant, median us over the runs, floor us)}: package `pkg`'s fastest variant of
    those timed (each variant's median over the runs)."""
    runs = []
    for path in sorted(glob.glob(os.path.join(root, f"dec-{pkg}-*.json"))):
        with open(path) as fh:
            runs.append(json.load(fh)["cases"])
    out = {}
    for c in CASES:
        med = {v: statistics.median(r[c]["variants"][v]["graph_us"] for r in runs)
               for v in runs[0][c]["variants"]}
        v = min(med, key=med.get)
        out[c] = (v, med[v], runs[0][c]["floor_us"])
    return out


def decode_rates(root, pkg):
    """{(type, positions): median decode tokens/s} of package `pkg`."""
    rates = {}
    for path in glob.glob(os.path.join(root, f"prof-*-{pkg}-long*.log")):
        m = re.search(r"prof-(q4_1|q8_0)-" + pkg + r"-long(\d+)-\d+\.log$", path)
        if not m:
            continue
        with open(path) as fh:
            d = re.search(r"decode: 127 tokens in [0-9.]+ s \(([0-9.]+) tokens/s\)", fh.read())
        if d:
            rates.setdefault((m.group(1), int(m.group(2))), []).append(float(d.group(1)))
    return {k: statistics.median(v) for k, v in rates.items()}


def main():
    root, png = sys.argv[1], sys.argv[2]
    old, new = fastest(root, "o1"), fastest(root, "n3")
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(15, 5), gridspec_kw={"width_ratios": [2.2, 1]})
    idx = list(range(len(CASES)))
    ax.bar([i - 0.2 for i in idx], [old[c][1] for c in CASES], 0.4, color="C7",
           label="one level (before)")
    ax.bar([i + 0.2 for i in idx], [new[c][1] for c in CASES], 0.4, color="C0",
           label="two levels past 32 splits")
    for i, c in enumerate(CASES):
        ax.text(i + 0.2, new[c][1], f"{new[c][1] / old[c][1] - 1:+.0%}", ha="center",
                va="bottom", fontsize=8)
    ax.plot(idx, [new[c][2] for c in CASES], "k_", markersize=18, label="bandwidth floor")
    ax.set_yscale("log")
    ax.set_xticks(idx)
    ax.set_xticklabels([c.replace("attn_", "").replace("_ctx", "\n") + f"\n{new[c][0]}"
                        for c in CASES], fontsize=7)
    ax.set_ylabel("us (graph replay, median; log scale)")
    ax.set_title("Decode attention, 32 q / 8 kv heads, head dim 128, H200")
    ax.legend(fontsize=8, loc="upper left")
    ro, rn = decode_rates(root, "o1"), decode_rates(root, "n3")
    keys = sorted(rn)
    j = list(range(len(keys)))
    bx.bar([i - 0.2 for i in j], [ro.get(k, 0) for k in keys], 0.4, color="C7", label="before")
    bx.bar([i + 0.2 for i in j], [rn[k] for k in keys], 0.4, color="C0", label="after")
    for i, k in enumerate(keys):
        if k in ro:
            bx.text(i + 0.2, rn[k], f"{rn[k] / ro[k] - 1:+.1%}", ha="center", va="bottom",
                    fontsize=8)
    bx.set_xticks(j)
    bx.set_xticklabels([f"{q}\n~{ {2: 219, 10: 587, 41: 2013}[n]} pos" for q, n in keys],
                       fontsize=8)
    bx.set_ylabel("decode tokens/s")
    bx.set_ylim(0, max(rn.values()) * 1.15)
    bx.set_title("SmolLM2-135M-shaped decode step (random weights)")
    bx.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
