#!/usr/bin/env python3
"""Draws what the decode attention's combine costs: for each case, a variant's time with the
combine split into the part without it (a package with the combine's body left out, wrong
results, timed only) and the rest, beside the bandwidth floor.

Usage:
  bench/combine_share_chart.py RESULTS_DIR OUT.png
      the thirteenth session's H200 timing of the f32 order's routed variants
      (bench/results/bytes-h200-2026-12-03/call3/: packages n3 and x)
  bench/combine_share_chart.py WHOLE.json CUT.json VARIANT OUT.png TITLE
      any two `kiln bench --json` files (e.g. the i8 order's `mma8_lds`,
      bench/results/i8-combine-2026-12-06/cC/i8-F-1.json and cT/bench-1.json), over the
      cases of CUT.json"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = ["attn_q8_0_ctx4k_t1", "attn_q8_0_ctx4k_t4", "attn_q8_0_ctx4k_t8",
         "attn_q8_0_ctx32k_t1", "attn_q8_0_ctx32k_t4", "attn_q8_0_ctx32k_t8"]


def cases(path):
    with open(path) as fh:
        return json.load(fh)["cases"]


def main():
    if len(sys.argv) == 3:
        root, png = sys.argv[1], sys.argv[2]
        whole = cases(os.path.join(root, "dec-n3-1.json"))
        cut = cases(os.path.join(root, "dec-x.json"))
        names, variant = CASES, None
        title = ("Decode attention, Q8_0 K/V, 32 q / 8 kv heads, head dim 128, H200: "
                 "what the combine costs")
    else:
        whole, cut = cases(sys.argv[1]), cases(sys.argv[2])
        variant, png, title = sys.argv[3], sys.argv[4], sys.argv[5]
        names = sorted(cut, key=lambda c: (len(c), c))
    fig, ax = plt.subplots(figsize=(11, 4.8))
    labels, rest, comb, floor = [], [], [], []
    for c in names:
        v = variant or whole[c]["variant"]
        w = whole[c]["variants"][v]["graph_us"]
        x = cut[c]["variants"][v]["graph_us"]
        labels.append(c.replace("attn_q8_0_", "") + f"\n{v}")
        rest.append(x)
        comb.append(w - x)
        floor.append(whole[c]["floor_us"])
    idx = range(len(labels))
    ax.bar(idx, rest, color="C0", label="everything but the combine")
    ax.bar(idx, comb, bottom=rest, color="C3", label="the combine (step 3)")
    for i in idx:
        tot = rest[i] + comb[i]
        ax.text(i, tot, f"{comb[i] / tot:.0%}", ha="center", va="bottom", fontsize=9)
    ax.plot(list(idx), floor, "k_", markersize=28, label="bandwidth floor")
    ax.set_xticks(list(idx))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("us (graph replay, median)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
