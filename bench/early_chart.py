#!/usr/bin/env python3
"""Draws bench/results/early-h200-2026-12-03.md's figures: the GEMVs with their first weight
blocks loaded before the grid-dependency wait against the same kernels with the wait first
(call 2, one package each, interleaved), llama.cpp's MUL_MAT in call 3, and the engine's decode
steps (calls 3 and 4).

    python3 bench/early_chart.py bench/results/early-h200-2026-12-03 docs/img/early-h200.png
"""

import json
import re
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def variant_us(path, case, variant):
    d = json.loads(Path(path).read_text())
    return d["cases"][case]["variants"][variant]["graph_us"]


def floor_us(path, case):
    return json.loads(Path(path).read_text())["cases"][case]["floor_us"]


def median_of(paths, case, variant):
    return statistics.median(variant_us(p, case, variant) for p in paths)


def peer_us(path, m, n):
    pat = re.compile(rf"PEER op=MUL_MAT type=q8_0 m={m} n={n} k=4096 R=\d+ mode=rot .*us_per_op=([0-9.]+)")
    for line in Path(path).read_text().splitlines():
        hit = pat.search(line)
        if hit:
            return float(hit.group(1))
    return None


def replay_us(path):
    text = Path(path).read_text()
    hit = re.search(r"graph replay on the device ([0-9.]+) us", text)
    return float(hit.group(1)) if hit else None


def main():
    root = Path(sys.argv[1])
    out = Path(sys.argv[2])
    c2 = root / "call2"
    late_k4 = [c2 / f"bench-k4-late-{i}.json" for i in (1, 2)]
    new_k4 = [c2 / f"bench-k4-new-{i}.json" for i in (1, 2)]
    late_t1 = [c2 / f"bench-t1-late-{i}.json" for i in (1, 2)]
    new_t1 = [c2 / f"bench-t1-new-{i}.json" for i in (1, 2)]
    peer = root / "call3" / "peer" / "peer.txt"

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(17, 5.2))

    # 1. The k4 GEMV (T = 1..8 on the matrix units), N = 14336 and 4096, K = 4096.
    cases = [(14336, 1), (14336, 4), (14336, 8), (4096, 1), (4096, 8)]
    labels = [f"N={n}\nT={t}" for n, t in cases]
    x = range(len(cases))
    w = 0.2
    late = [median_of(late_k4, f"gemv_q8_0_rp_k4_n{n}_t{t}", "wide_t2_g4") for n, t in cases]
    early = [median_of(new_k4, f"gemv_q8_0_rp_k4_n{n}_t{t}", "wide_t2_g4") for n, t in cases]
    floor = [floor_us(late_k4[0], f"gemv_q8_0_rp_k4_n{n}_t{t}") for n, t in cases]
    peers = [peer_us(peer, n, t) for n, t in cases]
    ax1.bar([i - 1.5 * w for i in x], late, w, label="wait first", color="#999999")
    ax1.bar([i - 0.5 * w for i in x], early, w, label="first trip before the wait", color="#d62728")
    ax1.bar([i + 0.5 * w for i in x], [p or 0 for p in peers], w, label="llama.cpp MUL_MAT (call 3)", color="#1f77b4")
    ax1.bar([i + 1.5 * w for i in x], floor, w, label="copy floor", color="#2ca02c")
    goals = {(14336, 1): 16.5, (14336, 8): 18.0, (4096, 1): 5.0, (4096, 8): 5.5}
    for i, c in enumerate(cases):
        if c in goals:
            ax1.plot([i - 2 * w, i + 2 * w], [goals[c]] * 2, color="black", lw=1.2)
    ax1.set_xticks(list(x), labels)
    ax1.set_ylabel("us (graph replay, weights rotated)")
    ax1.set_title("gemv_q8_0_rp_k4 wide_t2_g4 (black: issue 12 goal)")
    ax1.legend(fontsize=8)

    # 2. One-token dp4a GEMVs: the early load wins where the grid is small, loses where large.
    t1 = [
        ("gemv_q8_0_rp_n4096_t1", "p1r2u8w2", "N=4096\n(1024 wg)"),
        ("gemv_q8_0_rp_n14336_t1", "p1r2u8w2", "N=14336\n(3584 wg)"),
        ("gemv_q8_0_rp_n49152_k576_t1", "p1r4w2", "N=49152 K=576\n(6144 wg)"),
        ("gemv_q8_0_rp_res_n4096_k4096_t1", "p1u16w4", "res N=4096\n(1024 wg)"),
    ]
    late = [median_of(late_t1, c, v) for c, v, _ in t1]
    early = [median_of(new_t1, c, v) for c, v, _ in t1]
    x = range(len(t1))
    ax2.bar([i - 0.2 for i in x], late, 0.4, label="wait first", color="#999999")
    ax2.bar([i + 0.2 for i in x], early, 0.4, label="held before the wait", color="#d62728")
    ax2.set_xticks(list(x), [lab for _, _, lab in t1], fontsize=8)
    ax2.set_ylabel("us")
    ax2.set_title("one-token GEMVs (call 2): routed early only where it wins")
    ax2.legend(fontsize=8)

    # 3. The engine's decode step (replay): call 3 ran these kernels as at 3e671c5 (no peeled
    # trips, no early twins routed for SmolLM2's Q4_1, the plain twins forced for Q8_0); call 4
    # the final package.
    c3, c4 = root / "call3", root / "call4"
    steps = [
        ("SmolLM2 Q4_1", [c3 / "prof-rs-q4_1-1.log", c3 / "prof-rs-q4_1-2.log"], [c4 / "prof-rs-q4_1-1.log", c4 / "prof-rs-q4_1-2.log"]),
        ("SmolLM2 Q8_0", [c3 / "prof-rs-q8_0-plain-1.log", c3 / "prof-rs-q8_0-plain-2.log"], [c4 / "prof-rs-q8_0-1.log", c4 / "prof-rs-q8_0-2.log"]),
    ]
    names = [s[0] for s in steps]
    before = [statistics.median(replay_us(p) for p in s[1]) for s in steps]
    after = [statistics.median(replay_us(p) for p in s[2]) for s in steps]
    x = range(len(steps))
    ax3.bar([i - 0.2 for i in x], before, 0.4, label="kernels as at 3e671c5 (call 3)", color="#999999")
    ax3.bar([i + 0.2 for i in x], after, 0.4, label="final package (call 4)", color="#d62728")
    for i, (b, a) in enumerate(zip(before, after)):
        ax3.text(i - 0.2, b + 5, f"{b:.0f}", ha="center", fontsize=8)
        ax3.text(i + 0.2, a + 5, f"{a:.0f}", ha="center", fontsize=8)
    ax3.set_xticks(list(x), names)
    ax3.set_ylabel("us a decode step (graph replay)")
    ax3.set_title("engine step, ~173 positions")
    ax3.legend(fontsize=8, loc="lower center")

    fig.suptitle("GEMV weights loaded before griddepcontrol.wait (H200, 2026-12-03)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
