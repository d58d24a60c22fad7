#!/usr/bin/env python3
"""Draws bench/results/slots-h200-2026-12-03.md's figures: issue 12's small and Q4 GEMV cases
on the H200 as a fraction of their copy floor (floor / time: 100% is the floor), before this
session (bench/results/early-h200-2026-12-03/call4), with this session's routes (call 5, and
call 6 for the re-tuned one-token Q8_0 bucket), and llama.cpp's MUL_MAT timed in call 5, with
each goal as a marker.

    python3 bench/slots_chart.py bench/results docs/img/slots-h200.png
"""

import json
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def case(path, name, variant=None):
    c = json.loads(Path(path).read_text())["cases"][name]
    us = c["variants"][variant]["graph_us"] if variant else c["kiln_us"]
    return us, c["floor_us"]


def peer_us(path, ty, m, n):
    pat = re.compile(rf"PEER op=MUL_MAT type={ty} m={m} n={n} k=4096 R=\d+ mode=rot .*us_per_op=([0-9.]+)")
    for line in Path(path).read_text().splitlines():
        hit = pat.search(line)
        if hit:
            return float(hit.group(1))
    raise SystemExit(f"{path}: no {ty} m={m} n={n}")


def main():
    root, out = Path(sys.argv[1]), sys.argv[2]
    old = root / "early-h200-2026-12-03" / "call4"
    c5 = root / "slots-h200-2026-12-03" / "call5"
    c6 = root / "slots-h200-2026-12-03" / "call6"
    peer = c5 / "peer" / "peer.txt"
    # (label, before (json, case), now (json, case, variant), peer (type, m, n), goal in us or
    # as a multiple of the floor)
    rows = [
        ("Q8_0 N=4096 T=1", (old / "bench-t1.json", "gemv_q8_0_rp_n4096_t1"),
         (c6 / "bench-t1.json", "gemv_q8_0_rp_n4096_t1", "tuned_t1_nlo"), ("q8_0", 4096, 1), ("us", 5.0)),
        ("Q8_0 N=4096 T=8", (old / "bench-k4.json", "gemv_q8_0_rp_k4_n4096_t8"),
         (c5 / "bench-k4.json", "gemv_q8_0_rp_k4_n4096_t8", None), ("q8_0", 4096, 8), ("us", 5.5)),
        ("Q8_0 N=14336 T=8", (old / "bench-k4.json", "gemv_q8_0_rp_k4_n14336_t8"),
         (c5 / "bench-k4.json", "gemv_q8_0_rp_k4_n14336_t8", None), ("q8_0", 14336, 8), ("us", 18.0)),
        ("Q4_0 N=14336 T=1", (old / "bench-t1.json", "gemv_q4_0_rp_n14336_t1"),
         (c5 / "bench-t1.json", "gemv_q4_0_rp_n14336_t1", None), ("q4_0", 14336, 1), ("x", 1.15)),
        ("Q4_1 N=14336 T=1", (old / "bench-t1.json", "gemv_q4_1_rp_n14336_t1"),
         (c5 / "bench-t1.json", "gemv_q4_1_rp_n14336_t1", None), ("q4_1", 14336, 1), ("x", 1.15)),
    ]
    fig, ax = plt.subplots(figsize=(10, 4.8))
    w = 0.27
    for i, (label, before, now, pr, goal) in enumerate(rows):
        b_us, b_floor = case(*before)
        n_us, n_floor = case(*now)
        p_us = peer_us(peer, *pr)
        bars = [(b_floor / b_us, "kiln, 2026-12-03 before", "#9ecae1"),
                (n_floor / n_us, "kiln, this session", "#08519c"),
                (n_floor / p_us, "llama.cpp (call 5)", "#fdae6b")]
        for j, (v, name, color) in enumerate(bars):
            ax.bar(i + (j - 1) * w, 100 * v, w, color=color, label=name if i == 0 else None)
            us = [b_us, n_us, p_us][j]
            ax.text(i + (j - 1) * w, 100 * v + 1, f"{us:.2f}", ha="center", fontsize=7)
        g = n_floor / goal[1] if goal[0] == "us" else 1 / goal[1]
        ax.plot([i - 1.5 * w, i + 1.5 * w], [100 * g] * 2, color="crimson", lw=1.5,
                label="goal (issue 12)" if i == 0 else None)
    ax.set_xticks(range(len(rows)), [r[0] for r in rows], fontsize=8)
    ax.set_ylabel("% of the copy floor (floor / time), labels: us")
    ax.set_ylim(0, 125)
    ax.set_title("H200, graph replay, weights rotated; llama.cpp peer-bench in the same call")
    ax.legend(fontsize=8, loc="upper center", ncol=4)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


if __name__ == "__main__":
    main()
