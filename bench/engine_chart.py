#!/usr/bin/env python3
"""Draws the engine's H200 figures (issue 16) from a results folder of `.carry/final.sh`
(`bench/results/engine-h200-<date>/`): kiln's decode time a token against context beside
llama.cpp's llama-bench on the same files, where a SmolLM2-shaped step's time goes (by kernel,
with the session's starting point), and the Llama-3-8B-shaped step against its bandwidth floor.

Usage: bench/engine_chart.py RESULTS_DIR OUT.png [BEFORE.json]
  BEFORE.json: a `kiln generate --profile --json` of an earlier step, drawn as "before" beside the
  folder's per-kernel split ("after")."""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from llama_bench import tg128_by_depth  # noqa: E402


def load(path):
    with open(path) as f:
        return json.load(f)


def position(j):
    """The context at the end of a generation: the profile's position, or (a run without
    --profile) the prompt's tokens plus the generated ones."""
    if j.get("profile"):
        return j["profile"]["position"]
    return len(j["prompt_ids"]) + len(j["ids"])


def profiles(pattern):
    """The profiles matching `pattern`, the engine's own placement (`-auto-auto`, or a file
    without a placement) first."""
    return sorted(glob.glob(pattern), key=lambda f: ("-apart" in f or "-folded" in f, f))


def main():
    d, png = sys.argv[1], sys.argv[2]
    before = load(sys.argv[3]) if len(sys.argv) > 3 else None
    fig, ax = plt.subplots(1, 3, figsize=(18, 5.5))

    # 1. Time a token against context.
    a = ax[0]
    for m, style in [("rs-q4_1", "o-"), ("rs-q8_0", "s-")]:
        pts = []
        for f in glob.glob(f"{d}/ctx-{m}-*.json"):
            j = load(f)
            pts.append((position(j), 1e6 / j["decode_tokens_per_s"]))
        for f in profiles(f"{d}/prof-{m}-*.json")[:1]:
            j = load(f)
            pts.append((position(j), 1e6 / j["decode_tokens_per_s"]))
        pts.sort()
        if pts:
            a.plot(*zip(*pts), style, label=f"kiln, {m[3:].upper()}")
        lb = tg128_by_depth(f"{d}/llama-bench-{m}.md")
        if lb:
            xs = sorted(lb)
            a.plot([x + 64 for x in xs], [1e6 / lb[x] for x in xs], style.replace("-", "--"),
                   label=f"llama.cpp tg128, {m[3:].upper()}")
    a.set_xlabel("context (tokens before the decoded ones)")
    a.set_ylabel("us a decoded token")
    a.set_title("SmolLM2-135M shape: decode time a token (H200)")
    a.set_ylim(bottom=0)
    a.legend(fontsize=8)
    a.grid(alpha=0.3)

    # 2. Where a step goes, by kernel.
    a = ax[1]
    finals = profiles(f"{d}/prof-rs-q4_1-*.json")
    cols = []
    if before:
        cols.append(("before", before["profile"]))
    if finals:
        cols.append(("after", load(finals[0])["profile"]))
    names = []
    for _, p in cols:
        for k in p["kernels"]:
            if k["kernel"] not in names:
                names.append(k["kernel"])
    cmap = plt.get_cmap("tab20")
    top = max((sum(k["us"] for k in p["kernels"]) for _, p in cols), default=1.0)
    for i, (label, p) in enumerate(cols):
        bottom = 0.0
        by = {}
        for k in p["kernels"]:
            by[k["kernel"]] = by.get(k["kernel"], 0.0) + k["us"]
        for j, n in enumerate(names):
            v = by.get(n, 0.0)
            a.bar(i, v, bottom=bottom, color=cmap(j % 20), label=n if i == len(cols) - 1 else None)
            bottom += v
        a.text(i, bottom + top * 0.02, f"nodes {bottom:.0f} us\nreplay {p['replay_us']:.0f} us\n"
               f"wall {p['wall_us_per_token']:.0f} us", ha="center", fontsize=8)
    a.set_xticks(range(len(cols)), [c[0] for c in cols])
    a.set_ylim(0, top * 2.1)
    a.set_ylabel("us a step (each node alone, summed)")
    a.set_title("SmolLM2-135M Q4_1 shape: a decode step by kernel")
    a.legend(fontsize=6.5, loc="upper center", ncol=3)

    # 3. The 8B-shaped step against its floor and llama.cpp.
    a = ax[2]
    f8 = profiles(f"{d}/prof-r8b-*.json")
    if f8:
        p = load(f8[0])["profile"]
        bars = [("floor\n(weights / copy BW)", p["floor_us"]), ("kiln\nreplay", p["replay_us"]),
                ("kiln\nwall", p["wall_us_per_token"])]
        lb = tg128_by_depth(f"{d}/llama-bench-r8b-q8_0.md")
        if 0 in lb:
            bars.append(("llama.cpp\ntg128", 1e6 / lb[0]))
        a.bar(range(len(bars)), [b[1] for b in bars], color=["grey", "C0", "C0", "C1"][: len(bars)])
        for i, (_, v) in enumerate(bars):
            a.text(i, v + 30, f"{v:.0f} us\n{100 * p['floor_us'] / v:.0f}% of floor", ha="center", fontsize=8)
        a.set_xticks(range(len(bars)), [b[0] for b in bars])
    a.set_ylabel("us a decoded token")
    a.set_title("Llama-3-8B shape, Q8_0 (random weights): a token")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
