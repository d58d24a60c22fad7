#!/usr/bin/env python3
"""Draws the fifth session's H200 figures (bench/results/prefetch-h200-2026-12-01/): the decode
step's graph replay with and without the GEMV weight prefetch (SmolLM2 and Llama-3-8B shapes,
every call's runs), and the decode attention's time by case for the f32 order, the i8 order's
matrix-unit variants and torch SDPA.

Usage: bench/prefetch_chart.py RESULTS_DIR OUT.png"""
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return json.load(f)


def replays(root):
    """{(model, package): [replay us, ...]} over the call folders that timed `base` too (a
    ratio to another machine's `base` would mix machines)."""
    out = {}
    calls = {os.path.dirname(f) for f in glob.glob(os.path.join(root, "call*", "prof-*-base*.json"))}
    for f in sorted(glob.glob(os.path.join(root, "call*", "prof-*.json"))):
        if os.path.dirname(f) not in calls:
            continue
        m = re.match(r"prof-(rs-q4_1|rs-q8_0|r8b)-([a-z0-9]+)", os.path.basename(f))
        if not m:
            continue
        call = os.path.basename(os.path.dirname(f))
        pkg = "base" if m.group(2) == "base" else f"{m.group(2)} ({call})"
        out.setdefault((m.group(1), pkg), []).append(load(f)["profile"]["replay_us"])
    return out


def main():
    root, png = sys.argv[1], sys.argv[2]
    fig, (a, b) = plt.subplots(1, 2, figsize=(14, 5.2))
    r = replays(root)
    models = [("rs-q4_1", "SmolLM2 Q4_1"), ("rs-q8_0", "SmolLM2 Q8_0"), ("r8b", "Llama-3-8B Q8_0")]
    pkgs = sorted({p for (_, p) in r}, key=lambda p: (p != "base", p))
    width = 0.8 / max(1, len(pkgs))
    for i, p in enumerate(pkgs):
        xs, ys = [], []
        for j, (m, _) in enumerate(models):
            v = r.get((m, p))
            if v:
                base = min(r[(m, "base")]) if (m, "base") in r else None
                xs.append(j + i * width)
                ys.append(min(v) / base if base else 1.0)
        a.bar(xs, ys, width, label=p)
    a.set_xticks([j + width * (len(pkgs) - 1) / 2 for j in range(len(models))])
    a.set_xticklabels([n for _, n in models])
    a.axhline(1.0, color="black", lw=0.8)
    a.set_ylim(0.8, 1.2)
    a.set_ylabel("decode step replay / base (lower is faster)")
    a.set_title("GEMV weight prefetch before griddepcontrol.wait (H200)")
    a.legend(fontsize=8)

    bench = sorted(glob.glob(os.path.join(root, "call*", "bench-attn.json")))[-1]
    cases = load(bench)["cases"]
    sdpa_f = sorted(glob.glob(os.path.join(root, "call*", "sdpa.json")))
    sdpa = load(sdpa_f[-1]) if sdpa_f else {}
    labels = ["ctx4k_t1", "ctx4k_t4", "ctx4k_t8", "ctx32k_t1", "ctx32k_t4", "ctx32k_t8"]
    series = {"f32 order (best variant)": [], "i8 order (best variant)": [], "torch SDPA bf16": []}
    for lab in labels:
        f32 = cases.get(f"attn_q8_0_{lab}", {}).get("variants", {})
        i8 = cases.get(f"attn_q8_0_i8_{lab}", {}).get("variants", {})
        series["f32 order (best variant)"].append(min((v["graph_us"] for v in f32.values()), default=0))
        series["i8 order (best variant)"].append(min((v["graph_us"] for v in i8.values()), default=0))
        ctx, t = re.match(r"ctx(\d+)k_t(\d)", lab).groups()
        key = f"sdpa_bf16_ctx{int(ctx) * 1024}_t{t}"
        sdpa_us = sdpa.get(key, {}).get("us", 0) if isinstance(sdpa.get(key), dict) else sdpa.get(key, 0)
        series["torch SDPA bf16"].append(sdpa_us or 0)
    w = 0.27
    for i, (name, ys) in enumerate(series.items()):
        b.bar([j + i * w for j in range(len(labels))], ys, w, label=name)
    goals = {"ctx4k_t1": 4, "ctx4k_t8": 6, "ctx32k_t1": 20, "ctx32k_t8": 25}
    for j, lab in enumerate(labels):
        if lab in goals:
            b.plot([j - 0.1, j + 0.65], [goals[lab]] * 2, color="red", lw=1.5)
    b.set_xticks([j + w for j in range(len(labels))])
    b.set_xticklabels(labels)
    b.set_yscale("log")
    b.set_ylabel("us (graph replay, median); red: issue 13's goal")
    b.set_title("Decode attention, 32 q / 8 kv, d 128, Q8_0 cache (H200)")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
