#!/usr/bin/env python3
"""Decode attention against context (issue 13's chart): the Q8_0 cache, head dim 128, 32 q / 8 kv
heads, one panel per T (1, 4, 8); kiln's routed variant and its fastest variant in the same
`kiln bench` run (cases `attn_q8_0_ctx{1k,2k,4k,8k,16k,32k}_t{1,4,8}`), the i8 order's routed
variant where the run has its cases (`attn_q8_0_i8_ctx..._t...`), torch SDPA bf16
(`bench/attention_peers.py OUT.json 1024,...`), llama.cpp FLASH_ATTN_EXT with a q8_0 cache
(peer-bench with `PEER_FA_KV`, its layout, the `mode=rot` lines), the floor (the bytes at the run's copy
bandwidth) and the issue's goals.

Usage: bench/context_chart.py BENCH.json OUT.png [--sdpa SDPA.json] [--llama PEER.txt]
       [--variants r4x,r4x2,r1x]   (variants drawn as their own lines, where timed)
"""
import argparse
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CONTEXTS = [(1024, "1k"), (2048, "2k"), (4096, "4k"), (8192, "8k"), (16384, "16k"), (32768, "32k")]
GOALS = {1: {4096: 4.0, 32768: 20.0}, 8: {4096: 6.0, 32768: 25.0}}


def llama_fa(path):
    """{(kv, rows): us} of peer-bench's rotated FLASH_ATTN_EXT lines with a q8_0 cache in
    llama.cpp's own KV layout (`nb` is the query rows, `R` the rotated sets)."""
    got = {}
    if not path:
        return got
    with open(path) as fh:
        for line in fh:
            want = ("FLASH_ATTN_EXT", "mode=rot", "type_KV=q8_0", "layout=llama")
            if not all(w in line for w in want):
                continue
            kv = re.search(r" kv=(\d+)", line)
            rows = re.search(r" nb=(\d+)", line)
            us = re.search(r"us_per_op=([0-9.]+)", line)
            if kv and rows and us:
                got.setdefault((int(kv.group(1)), int(rows.group(1))), float(us.group(1)))
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("out")
    ap.add_argument("--sdpa")
    ap.add_argument("--llama")
    ap.add_argument("--variants", default="")
    a = ap.parse_args()
    run = json.load(open(a.bench))
    cases = run["cases"]
    # "NVIDIA H100 80GB HBM3 (sm_90, driver 13.0)" -> "NVIDIA H100 80GB HBM3"
    device = run.get("device", "the GPU").split(" (")[0]
    sdpa = json.load(open(a.sdpa)) if a.sdpa else {}
    fa = llama_fa(a.llama)
    extra = [v for v in a.variants.split(",") if v]
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    for ax, t in zip(axes, (1, 4, 8)):
        xs, routed, best, floor, names = [], [], [], [], []
        lines = {v: ([], []) for v in extra}
        for ctx, tag in CONTEXTS:
            c = cases.get(f"attn_q8_0_ctx{tag}_t{t}")
            if not c:
                continue
            xs.append(ctx)
            routed.append(c["kiln_us"])
            fastest = min(c["variants"].items(), key=lambda kv: kv[1]["graph_us"])
            best.append(fastest[1]["graph_us"])
            names.append(fastest[0])
            floor.append(c["floor_us"])
            for v in extra:
                if v in c["variants"]:
                    lines[v][0].append(ctx)
                    lines[v][1].append(c["variants"][v]["graph_us"])
        if not xs:
            ax.set_title(f"T = {t}: not in this run")
            ax.axis("off")
            continue
        ix = [ctx for ctx, tag in CONTEXTS if f"attn_q8_0_i8_ctx{tag}_t{t}" in cases]
        if ix:
            iy = [cases[f"attn_q8_0_i8_ctx{tag}_t{t}"]["kiln_us"] for ctx, tag in CONTEXTS
                  if ctx in ix]
            ax.plot(ix, iy, "D-", color="#8172b3", label="kiln i8 order (8-bit q and P), routed")
        ax.plot(xs, routed, "o-", color="#c44e52", label="kiln, routed")
        ax.plot(xs, best, "s--", color="#dd8452", label="kiln, fastest variant")
        for x, y, n in zip(xs, best, names):
            ax.annotate(n, (x, y), fontsize=6, xytext=(2, -9), textcoords="offset points")
        for v, (vx, vy) in lines.items():
            if vx:
                ax.plot(vx, vy, ".:", label=f"kiln {v}")
        ax.plot(xs, floor, "k-", lw=0.8, label="floor (bytes / copy bandwidth)")
        sx = [ctx for ctx, _ in CONTEXTS if f"sdpa_bf16_ctx{ctx}_t{t}" in sdpa]
        if sx:
            ax.plot(sx, [sdpa[f"sdpa_bf16_ctx{ctx}_t{t}"]["us"] for ctx in sx], "^-",
                    color="#4c72b0", label="torch SDPA bf16")
        lx = [ctx for ctx, _ in CONTEXTS if (ctx, t) in fa]
        if lx:
            ax.plot(lx, [fa[(ctx, t)] for ctx in lx], "v-", color="#55a868",
                    label="llama.cpp FLASH_ATTN_EXT q8_0")
        for ctx, us in GOALS.get(t, {}).items():
            ax.plot([ctx], [us], "*", color="k", ms=10)
            ax.annotate(f"goal {us:g}", (ctx, us), fontsize=7, xytext=(4, 4),
                        textcoords="offset points")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context (keys)")
        ax.set_ylabel("us a call")
        ax.set_title(f"T = {t} (32 q / 8 kv heads, d 128, Q8_0 cache)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Decode attention against context on {device} (graph replay, caches rotated)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
