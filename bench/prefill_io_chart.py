#!/usr/bin/env python3
"""Draws TFLOP/s against L (32 q / 8 kv heads, head dim 128, causal) of the routed wide variant
of prompt-attention families from `kiln bench --json` files, f16 and Q8_0 caches side by side,
with torch SDPA (bf16, flash) from the same call (`bench/prefill_peers.py`).

Usage: bench/prefill_io_chart.py CALL_DIR OUT.png [LABEL=BENCH.json[:SUFFIX] ...]

CALL_DIR holds sdpa.json (and, by default, bench.json). Each LABEL=FILE[:SUFFIX] draws the
families `prefill_{cache}{SUFFIX}_l*` of FILE (relative to CALL_DIR); without any, the three
families of bench.json: Q f16 / out f32, `_qbf16` and `_of16`
(bench/results/prefill-io-h200-2026-12-02/call1)."""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from prefill_chart import CASE, LS, flops, style_axis  # noqa: E402

ROUTED = {"f16": "w4g", "q8_0": "w4qs"}
DEFAULT = ["Q f16, out f32=bench.json", "Q bf16, out f32=bench.json:_qbf16",
           "Q f16, out f16=bench.json:_of16"]


def main():
    call, out = sys.argv[1], sys.argv[2]
    series = []
    for spec in sys.argv[3:] or DEFAULT:
        label, src = spec.split("=", 1)
        path, _, suffix = src.partition(":")
        series.append((label, json.load(open(os.path.join(call, path)))["cases"], suffix))
    sdpa = json.load(open(os.path.join(call, "sdpa.json")))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, cache in zip(axes, ["f16", "q8_0"]):
        for label, cases, suffix in series:
            ys = []
            for l in LS:
                c = cases[f"prefill_{cache}{suffix}_{CASE[l]}"]
                ys.append(flops(l) / (c["variants"][ROUTED[cache]]["graph_us"] * 1e6))
            ax.plot(LS, ys, marker="o", label=f"kiln {ROUTED[cache]}: {label}")
        ys = [sdpa[f"sdpa_flash_bf16_causal_l{l}"]["tflops"] for l in LS]
        ax.plot(LS, ys, marker="s", color="black", label="torch SDPA bf16 (flash)")
        style_axis(ax, f"{cache} K/V cache")
    axes[0].set_ylabel("TFLOP/s (causal)")
    fig.suptitle("attention_prefill on the H200 (32 q / 8 kv, head dim 128)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
