#!/usr/bin/env python3
"""Draws the twenty-second session's two decode-attention changes
(bench/results/bias-h200-2026-12-04/): left, the Q8_0 d128 attention cases (32 q / 8 kv heads)
with the package before the first-chunk loads (`after`, call 3, mean of its two runs) and
with them (`final`); right, the SmolLM2-shaped decode step's graph replay at ~173 / ~587 /
~2013 positions, Q4_1 and Q8_0, same two packages (call 3), and the committed tree (the
first-chunk loads without the exponent-bias converts: call 5, mean of two runs).

    python3 bench/bias_chart.py bench/results/bias-h200-2026-12-04 docs/img/bias-h200.png
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CASES = ["ctx4k_t1", "ctx4k_t4", "ctx4k_t8", "ctx32k_t1", "ctx32k_t4", "ctx32k_t8"]
TAGS = ["short", "mid", "long"]


def routed(path):
    """Routed time (us) of each Q8_0 case in a `kiln bench --json` file."""
    cases = json.loads(path.read_text())["cases"]
    return {c: cases[f"attn_q8_0_{c}"]["kiln_us"] for c in CASES}


def replay(path):
    d = json.loads(path.read_text())
    return d["profile"]["position"], d["profile"]["replay_us"]


def main():
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    c3 = root / "call3"
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.6))
    width = 0.38
    for k, (pkg, color) in enumerate((("after", "lightgray"), ("final", "tab:blue"))):
        runs = [routed(c3 / f"bench-{pkg}-{r}.json") for r in "ab"]
        mean = [sum(r[c] for r in runs) / len(runs) for c in CASES]
        base = routed(c3 / "bench-after-a.json")
        xs = [i + (k - 0.5) * width for i in range(len(CASES))]
        ax.bar(xs, [m / base[c] for m, c in zip(mean, CASES)], width, color=color,
               label="before" if pkg == "after" else "first chunk before q")
        if pkg == "final":
            for x, m in zip(xs, mean):
                ax.text(x, 1.005, f"{m:.1f}", ha="center", va="bottom", fontsize=7, rotation=90)
    ax.set_xticks(range(len(CASES)), [c.replace("_", " ") for c in CASES], fontsize=8)
    ax.set_ylim(0.85, 1.1)
    ax.axhline(1, color="black", lw=0.5)
    ax.set_ylabel("time / before (routed variant)")
    ax.set_title("decode attention, Q8_0, d128, 32 q / 8 kv (call 3; us above bars)")
    ax.legend(fontsize=8, loc="lower right")
    for model, mark, color in (("q4", "o", "tab:orange"), ("q8", "s", "tab:green")):
        for pkg, style in (("after", ":"), ("final", "-")):
            pts = [replay(c3 / f"prof-{model}-{t}-{pkg}.json") for t in TAGS]
            bx.plot([p for p, _ in pts], [r for _, r in pts], mark + style, color=color,
                    label=f"{model.upper()} {'bias converts' if pkg == 'after' else 'bias + first chunk before q'} (call 3)")
        c5 = root / "call5"
        pts = []
        for t in ("short", "long"):
            runs = [replay(c5 / f"prof-{model}-{t}-nobias-{i}.json") for i in (1, 2)]
            pts.append((runs[0][0], sum(r for _, r in runs) / len(runs)))
        bx.plot([p for p, _ in pts], [r for _, r in pts], "*", ms=12, color=color,
                label=f"{model.upper()} first chunk before q, cvt: committed (call 5)")
    bx.set_xlabel("position (keys)")
    bx.set_ylabel("step graph replay (us)")
    bx.set_title("SmolLM2-shaped decode step (H200)")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
