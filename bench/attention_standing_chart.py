#!/usr/bin/env python3
"""Issue 13's six cases (32 q / 8 kv heads, head dim 128, Q8_0 cache; 4K and 32K keys, T = 1, 4,
8): kiln's two orders routed (the f32 order's `attn_q8_0_*` and the i8 order's `attn_q8_0_i8_*`
cases of `kiln bench --json` files), torch SDPA bf16 (`bench/attention_peers.py OUT.json`),
llama.cpp's FLASH_ATTN_EXT with a q8_0 cache (peer-bench `PEER ...` lines, its own layout,
rotated), the floor and the goals, us on a log scale.

Usage: bench/attention_standing_chart.py OUT.png TITLE BENCH.json [BENCH.json ...]
       [--sdpa SDPA.json] [--llama PEER.txt]
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from context_chart import llama_fa  # noqa: E402

CASES = [(4096, "4k", t) for t in (1, 4, 8)] + [(32768, "32k", t) for t in (1, 4, 8)]
GOALS = {(4096, 1): 4.0, (4096, 8): 6.0, (32768, 1): 20.0, (32768, 8): 25.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("title")
    ap.add_argument("bench", nargs="+")
    ap.add_argument("--sdpa")
    ap.add_argument("--llama")
    a = ap.parse_args()
    cases = {}
    for path in a.bench:
        cases.update(json.load(open(path))["cases"])
    sdpa = json.load(open(a.sdpa)) if a.sdpa else {}
    fa = llama_fa(a.llama)
    series = [
        ("kiln f32 order, routed", "#c44e52", lambda ctx, tag, t: cases.get(f"attn_q8_0_ctx{tag}_t{t}", {}).get("kiln_us")),
        ("kiln i8 order, routed", "#8172b3", lambda ctx, tag, t: cases.get(f"attn_q8_0_i8_ctx{tag}_t{t}", {}).get("kiln_us")),
        ("torch SDPA bf16", "#4c72b0", lambda ctx, tag, t: sdpa.get(f"sdpa_bf16_ctx{ctx}_t{t}", {}).get("us")),
        ("llama.cpp FLASH_ATTN_EXT q8_0", "#55a868", lambda ctx, tag, t: fa.get((ctx, t))),
    ]
    series = [s for s in series if any(s[2](*c) for c in CASES)]
    fig, ax = plt.subplots(figsize=(11, 4.8))
    width = 0.8 / len(series)
    for i, (label, color, get) in enumerate(series):
        xs, ys = [], []
        for j, c in enumerate(CASES):
            y = get(*c)
            if y:
                xs.append(j + (i - (len(series) - 1) / 2) * width)
                ys.append(y)
        bars = ax.bar(xs, ys, width, label=label, color=color)
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.1f}", ha="center", va="bottom", fontsize=6)
    floor = [cases.get(f"attn_q8_0_ctx{tag}_t{t}", {}).get("floor_us") for _, tag, t in CASES]
    js = [j for j, f in enumerate(floor) if f]
    ax.hlines([floor[j] for j in js], [j - 0.4 for j in js], [j + 0.4 for j in js], colors="k",
              label="floor (bytes / copy bandwidth)")
    for j, (ctx, _, t) in enumerate(CASES):
        if (ctx, t) in GOALS:
            ax.plot([j], [GOALS[(ctx, t)]], "*", color="k", ms=10)
    ax.plot([], [], "*", color="k", label="goal (issue 13, H200)")
    ax.set_xticks(range(len(CASES)))
    ax.set_xticklabels([f"{tag} keys, T = {t}" for _, tag, t in CASES], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("us a call (graph replay, median)")
    ax.set_title(a.title, fontsize=10)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
