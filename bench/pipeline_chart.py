#!/usr/bin/env python3
"""Draws the sixth session's H200 figures (bench/results/pipeline-h200-2026-12-02/): the time a
decode token takes on SmolLM2's shape (wall and graph replay, each run of each call) against
llama.cpp's llama-bench tg128 in the same call and the 2x goal, and the step of Llama-3-8B's
shape with the norms apart or in the residual GEMVs' tails against the bandwidth floor.

Usage: bench/pipeline_chart.py RESULTS_DIR OUT.png"""
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def runs(root):
    """[(call, model, placement, wall us, replay us, floor us)] of every profiled run."""
    out = []
    for f in sorted(glob.glob(os.path.join(root, "call*", "prof-*.json"))):
        m = re.match(r"prof-(rs-q4_1|rs-q8_0|r8b)(?:-([a-z]+))?-?(\d)?\.json", os.path.basename(f))
        if not m:
            continue
        if (m.group(2) or "").startswith("p1r"):
            continue
        # Where the norms ran, as the run's log says ("norms Folded", "Apart", "InResidual").
        with open(f[: -len(".json")] + ".log") as fh:
            placement = re.search(r"norms (\w+)", fh.read()).group(1)
        with open(f) as fh:
            p = json.load(fh)["profile"]
        call = os.path.basename(os.path.dirname(f))
        out.append((call, m.group(1), placement, p["wall_us_per_token"], p["replay_us"], p["floor_us"]))
    return out


def llama(root):
    """{(call, model): tokens/s} of llama-bench tg128."""
    out = {}
    for f in glob.glob(os.path.join(root, "call*", "llama-bench-*.md")):
        model = re.match(r"llama-bench-(.*)\.md", os.path.basename(f)).group(1)
        for line in open(f):
            if "tg128" in line:
                out[(os.path.basename(os.path.dirname(f)), model)] = float(line.split("|")[-2].split()[0])
    return out


def main():
    root, png = sys.argv[1], sys.argv[2]
    rs, lb = runs(root), llama(root)
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5))
    labels, walls, replays, peers = [], [], [], []
    for call, model, placement, wall, replay, _ in rs:
        if model == "r8b":
            continue
        labels.append(f"{model[3:]} {placement}\n{call}")
        walls.append(wall)
        replays.append(replay)
        peers.append(1e6 / lb[(call, model)] if (call, model) in lb else None)
    x = range(len(labels))
    a.bar([i - 0.2 for i in x], walls, 0.4, label="kiln: wall time a token (queued steps)")
    a.bar([i + 0.2 for i in x], replays, 0.4, label="kiln: graph replay")
    for i, p in zip(x, peers):
        if p:
            a.hlines(p / 2, i - 0.45, i + 0.45, colors="red")
    a.plot([], [], color="red", label="goal: half of llama.cpp's time a token (same call)")
    a.set_xticks(list(x))
    a.set_xticklabels(labels, fontsize=7, rotation=60, ha="right")
    a.set_ylabel("us a token")
    a.set_title("SmolLM2-135M shape, decode at ~173 positions (H200)")
    a.legend(fontsize=7, loc="upper left")
    r8 = [(c, p, r, f) for c, m, p, _, r, f in rs if m == "r8b"]
    b.bar(range(len(r8)), [r for _, _, r, _ in r8], color=["C3" if p == "InResidual" else "C1" for _, p, _, _ in r8])
    b.set_xticks(range(len(r8)))
    b.set_xticklabels([f"norms {p}\n{c}" for c, p, _, _ in r8], fontsize=7, rotation=30, ha="right")
    if r8:
        floor = r8[0][3]
        b.axhline(floor, color="black", ls="--", label=f"bandwidth floor {floor:.0f} us")
        b.axhline(floor / 0.85, color="green", ls=":", label="goal: 85% of the floor")
    b.set_ylabel("graph replay, us a step")
    b.set_title("Llama-3-8B shape, Q8_0: where the RMSNorms run")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
