#!/usr/bin/env python3
"""Draws a GEMV results table (kiln, llama.cpp, cuBLAS bf16, floor) as a PNG.
Usage: gemv_chart.py OUT.png [h200-2026-11-30 | h100-2026-12-06 | h200-2026-12-06 |
h100-2026-12-07] (default the first): the figures are the ones in
bench/results/gemv-h200-2026-11-30.md, gemv-h100-2026-12-06.md, h200-2026-12-06b.md or
standing-2026-12-07.md."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from floor_bars import floor_bars  # noqa: E402

# case: (kiln us, llama.cpp us, cuBLAS bf16 us, floor us), H200, 2026-11-30, one run.
ROWS = {
    "Q8_0 14336 T=1": (17.06, 22.91, 31.37, 14.80),
    "Q8_0 14336 T=8": (27.65, 44.28, 31.00, 14.91),
    "Q8_0 4096 T=1": (7.47, 8.62, 13.91, 4.23),
    "Q8_0 4096 T=8": (12.48, 16.31, 13.85, 4.26),
    "Q4_0 14336 T=1": (10.22, 16.89, None, 7.84),
    "Q4_1 14336 T=1": (10.69, 14.86, None, 8.71),
    "bf16 14336 T=1": (41.51, 32.57, 31.37, 27.85),
    "MoE Qwen3 T=1": (5.38, 8.68, None, 3.18),
    "MoE Qwen3 T=8": (24.83, 32.81, None, 20.65),
    "MoE Mixtral T=8": (121.08, 241.63, None, 103.74),
}
# The same cases on an H100, 2026-12-06 (kiln's fastest variant of the routed family, llama.cpp's
# peer-bench in the same call; floor at the call's 2999 GB/s copy bandwidth).
ROWS_H100 = {
    "Q8_0 14336 T=1": (21.86, 24.60, None, 20.82),
    "Q8_0 14336 T=8": (24.25, 43.84, None, 20.97),
    "Q8_0 4096 T=1": (7.50, 9.16, None, 5.93),
    "Q8_0 4096 T=8": (9.82, 16.12, None, 6.00),
    "Q4_0 14336 T=1": (12.15, 17.03, None, 11.00),
    "Q4_1 14336 T=1": (13.18, 15.74, None, 12.22),
    "MoE Qwen3 T=1": (5.97, 9.10, None, 4.45),
    "MoE Qwen3 T=8": (34.48, 39.49, None, 28.95),
}
# On an H200, 2026-12-06 (forty-second session, bench/results/h200-2026-12-06b.md): kiln's routed
# variant (the sound package: activations loaded after the grid-dependency wait), llama.cpp's
# peer-bench in the same call; floor at the call's 4225 GB/s.
ROWS_H200_B = {
    "Q8_0 14336 T=1": (15.67, 22.88, None, 14.78),
    "Q8_0 14336 T=8": (18.76, 44.23, None, 14.88),
    "Q8_0 4096 T=1": (5.48, 8.60, None, 4.22),
    "Q8_0 4096 T=8": (8.68, 16.31, None, 4.26),
    "Q4_0 14336 T=1": (8.90, 16.85, None, 7.83),
    "Q4_1 14336 T=1": (9.99, 14.84, None, 8.70),
    "MoE Qwen3 T=1": (5.37, 8.71, None, 3.17),
    "MoE Qwen3 T=8": (24.86, 32.77, None, 20.62),
}
# On an H100, 2026-12-07 (forty-fifth session, bench/results/standing-2026-12-07.md): HEAD's
# package, kiln's routed variant, llama.cpp's peer-bench in the same call; floor at 3009 GB/s.
ROWS_H100_C = {
    "Q8_0 14336 T=1": (21.89, 24.55, None, 20.76),
    "Q8_0 14336 T=8": (24.08, 43.78, None, 20.90),
    "Q8_0 4096 T=1": (7.58, 9.13, None, 5.93),
    "Q8_0 4096 T=8": (9.83, 16.19, None, 5.98),
    "Q4_0 14336 T=1": (12.15, 17.02, None, 11.00),
    "Q4_1 14336 T=1": (13.17, 15.72, None, 12.22),
    "MoE Qwen3 T=1": (6.57, 9.07, None, 4.45),
    "MoE Qwen3 T=8": (34.93, 39.45, None, 28.95),
}
# Per results file: its rows, the GPU and the call's copy bandwidth (GB/s).
TABLES = {
    "h200-2026-11-30": (ROWS, "H200", 4219),
    "h100-2026-12-06": (ROWS_H100, "H100", 2999),
    "h200-2026-12-06": (ROWS_H200_B, "H200", 4225),
    "h100-2026-12-07": (ROWS_H100_C, "H100", 3009),
}
which = sys.argv[2] if len(sys.argv) > 2 else "h200-2026-11-30"
if which not in TABLES:
    sys.exit(f"gemv_chart.py: unknown table {which!r} ({' or '.join(TABLES)})")
ROWS, gpu, bw = TABLES[which]
series = [("kiln", 0, "#d9480f"), ("llama.cpp (incl. its quantize)", 1, "#1c7ed6"), ("cuBLAS bf16", 2, "#37b24d")]
series = [s for s in series if any(r[s[1]] is not None for r in ROWS.values())]
fig, ax = plt.subplots(figsize=(11, 4.5))
# Percent of the floor (floor time / time): 100 is the copy bandwidth; labels give the us.
cases = floor_bars(ax, ROWS, series, 3, 0.26)
ax.axhline(100, color="k", ls="--", lw=1, label=f"floor: bytes / copy bandwidth ({bw} GB/s)")
ax.set_xticks(range(len(cases)))
ax.set_xticklabels(cases, rotation=15, fontsize=8)
ax.set_ylabel("% of the floor (labels: us a call)")
ax.set_ylim(0, 110)
ax.set_title(f"GEMV on an {gpu}, weights rotated over > L2 (K = 4096; MoE: 128 experts top-8, 768x2048)")
ax.set_ylim(0, 125)
ax.legend(fontsize=8, loc="upper center", ncol=4)
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=110)
