#!/usr/bin/env python3
"""Draws the eighth session's H200 figures (bench/results/engine-h200-2026-12-02/): SmolLM2's
decode step before (package b) and after (package a) this session's kernel changes against half
of llama.cpp's llama-bench tg128 time (call 1), and kiln's decode tokens/s against the context
with twice llama-bench's (depth 0 from call 1; depths 512 and 2048 from
bench/results/smollm2-h200-2026-11-30.md, an earlier call: named so on the chart).

Usage: bench/decode_ab_chart.py RESULTS_DIR OUT.png"""
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

# llama-bench tg128 at depths 512 and 2048 (2026-11-30, same H200 kind, same llama.cpp source).
LLAMA_DEPTH = {"q4_1": {512: 894.0, 2048: 859.0}, "q8_0": {512: 880.0, 2048: 876.0}}


def prof(path):
    with open(path) as fh:
        return json.load(fh)["profile"]


def decode_tps(log):
    with open(log) as fh:
        m = re.search(r"decode: \d+ tokens in [\d.]+ s \(([\d.]+) tokens/s\)", fh.read())
    return float(m.group(1))


def llama(root):
    out = {}
    for f in glob.glob(os.path.join(root, "call1", "llama-bench-*.md")):
        model = re.match(r"llama-bench-(.*)\.md", os.path.basename(f)).group(1)
        for line in open(f):
            if "tg128" in line:
                out[model] = float(line.split("|")[-2].split()[0])
    return out


def main():
    root, png = sys.argv[1], sys.argv[2]
    lb = llama(root)
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5))
    labels, replays, colors = [], [], []
    for q in ["q4_1", "q8_0"]:
        for call in ["call1", "call2"]:
            for pkg in ["b", "a"]:
                for i in [1, 2]:
                    f = os.path.join(root, call, f"prof-rs-{q}-{pkg}-{i}.json")
                    if os.path.exists(f):
                        labels.append(f"{q} {pkg} {call}#{i}")
                        replays.append(prof(f)["replay_us"])
                        colors.append("C0" if pkg == "b" else "C2" if call == "call2" else "C7")
    a.bar(range(len(labels)), replays, color=colors)
    for q, x0 in [("q4_1", 0), ("q8_0", len(labels) // 2)]:
        if f"rs-{q}" in lb:
            half = 1e6 / lb[f"rs-{q}"] / 2
            a.hlines(half, x0 - 0.5, x0 + len(labels) // 2 - 0.5, colors="red")
    (goal,) = a.plot([], [], color="red", label="goal: half of llama-bench tg128's time a token (call 1)")
    handles = [goal]
    for c, text in [
        ("C0", "b: before (HEAD 4be39dc's kernels)"),
        ("C7", "a in call 1: first try (K/V before q, p2 preload; reverted)"),
        ("C2", "a in call 2: this session's kernels"),
    ]:
        handles.append(Patch(color=c, label=text))
    a.set_xticks(range(len(labels)))
    a.set_xticklabels(labels, fontsize=7, rotation=60, ha="right")
    a.set_ylim(400, 620)
    a.set_ylabel("graph replay, us a token")
    a.set_title("SmolLM2-135M shape, decode step at position 173 (H200)")
    a.legend(handles=handles, fontsize=7, loc="upper right")
    for q, c in [("q4_1", "C0"), ("q8_0", "C1")]:
        pts = []
        for name in [f"prof-rs-{q}-a-1", f"prof-rs-{q}-a-long10", f"prof-rs-{q}-a-long41"]:
            f = os.path.join(root, "call2", name + ".json")
            if os.path.exists(f):
                pts.append((prof(f)["position"], decode_tps(f[:-5] + ".log")))
        if pts:
            b.plot([p for p, _ in pts], [t for _, t in pts], "o-", color=c, label=f"kiln {q} (call 2)")
        goal = [(0, 2 * lb.get(f"rs-{q}", float("nan")))] + [(d, 2 * v) for d, v in LLAMA_DEPTH[q].items()]
        b.plot([d for d, _ in goal], [g for _, g in goal], "x--", color=c, label=f"2x llama-bench {q} (depth 0: call 1; 512, 2048: 2026-11-30)")
    b.set_xlabel("context (position of the decode step)")
    b.set_ylabel("decode tokens/s")
    b.set_title("SmolLM2-135M shape: decode against context (H200)")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
