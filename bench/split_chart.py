#!/usr/bin/env python3
"""Draws the split norms' results (bench/results/split-h200-2026-12-04/): the Llama-3-8B-shaped
decode step's replay time with the norms apart and split in every call that timed both, against
the weights' bandwidth floor and the 85% goal, and the speculative-verify steps (T = 1, 2, 4, 8)
of call 5.

    python3 bench/split_chart.py bench/results/split-h200-2026-12-04 docs/img/split-h200.png
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def profile(path):
    return json.loads(path.read_text())["profile"]


def main():
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    # (call, label, file stem) for each timed step; the apart / split pairs of one call share it.
    runs = []
    for call in sorted(root.glob("call*")):
        for f in sorted(call.glob("prof-*.json")):
            if f.stem.startswith("prof-rs-"):
                continue  # SmolLM2-shaped steps
            name = f.stem.removeprefix("prof-").removeprefix("r8b-")
            # call 1: the norms apart as routed then, and the timing-only build without them.
            if call.name == "call1":
                name = "skip-norms" + name[4:] if name.startswith("skip") else "apart"
            runs.append((call.name, name, profile(f)))
    floor = runs[0][2]["floor_us"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [2.2, 1]})
    labels, values, colors = [], [], []
    for call, name, p in runs:
        split = not name.startswith("apart")
        # call 1's second pair is the uncommitted timing-only build without norm nodes.
        if call == "call1" and name.startswith("skip"):
            color = "#999999"
        else:
            color = "#1f77b4" if split else "#d62728"
        labels.append(f"{call[-1]}: {name}")
        values.append(p["replay_us"])
        colors.append(color)
    a.bar(range(len(values)), values, color=colors)
    a.axhline(floor, color="black", lw=1, label=f"bandwidth floor {floor:.0f} us")
    a.axhline(floor / 0.85, color="green", ls="--", lw=1, label=f"85% of the floor ({floor / 0.85:.0f} us)")
    a.set_xticks(range(len(values)))
    a.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
    a.set_ylim(1900, max(values) * 1.03)
    a.set_ylabel("decode step, graph replay (us, median of 200)")
    a.set_title("Llama-3-8B-shaped Q8_0 step on an H200: norms apart (red) and split (blue)")
    a.legend(loc="lower right", fontsize=8)
    five = {n: p for c, n, p in runs if c == "call5"}
    for name, color in (("apart-1", "#d62728"), ("routed-1", "#1f77b4")):
        p = five[name]
        ts = [1] + [s["tokens"] for s in p["verify_steps_us"]]
        us = [p["replay_us"]] + [s["us"] for s in p["verify_steps_us"]]
        label = "apart" if name.startswith("apart") else "split (routed)"
        b.plot(ts, [u / t for u, t in zip(us, ts)], "o-", color=color, label=label)
    b.set_xscale("log", base=2)
    b.set_xticks([1, 2, 4, 8])
    b.set_xticklabels(["1", "2", "4", "8"])
    b.set_xlabel("tokens a step (speculative verify)")
    b.set_ylabel("us a token")
    b.set_title("call 5: time a token against tokens a step")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
