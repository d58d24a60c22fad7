#!/usr/bin/env python3
"""Draws a change's effect on the routed variants: for every case of each pair of `kiln bench
--json` files (before, after; the same card and call), the router's choice before beside the
router's choice after, us, with the change in percent.

Usage: bench/before_after_chart.py OUT.png TITLE BEFORE.json AFTER.json [BEFORE.json AFTER.json ...]
e.g. (bench/results/i8-combine-2026-12-06, the thirty-eighth session's combine change):
  R=bench/results/i8-combine-2026-12-06
  bench/before_after_chart.py docs/img/combine-unroll-h100.png "TITLE" \\
      $R/cV/i8-F-1.json $R/cV/i8-I-1.json $R/cW/q8-F.json $R/cW/q8-B.json \\
      $R/cW/f16-F.json $R/cW/f16-B.json"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def cases(path):
    with open(path) as fh:
        return json.load(fh)["cases"]


def main():
    out, title, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    if len(files) < 2 or len(files) % 2:
        sys.exit(__doc__)
    rows = []
    for before, after in zip(files[::2], files[1::2]):
        b, a = cases(before), cases(after)
        for name in sorted(set(b) & set(a), key=lambda c: (c.split("_ctx")[0], len(c), c)):
            rows.append((name.replace("attn_", ""), b[name]["variant"], b[name]["kiln_us"],
                         a[name]["variant"], a[name]["kiln_us"]))
    fig, ax = plt.subplots(figsize=(max(8, 0.75 * len(rows)), 4.6))
    w = 0.38
    for i, (name, vb, tb, va, ta) in enumerate(rows):
        ax.bar(i - w / 2, tb, w, color="#9e9e9e", label="before" if i == 0 else None)
        ax.bar(i + w / 2, ta, w, color="#1f77b4", label="after" if i == 0 else None)
        ax.text(i + w / 2, ta, f"{100 * (ta - tb) / tb:+.0f}%", ha="center", va="bottom",
                fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"{n}\n{vb}" + ("" if vb == va else f" -> {va}")
                        for n, vb, _, va, _ in rows], fontsize=6, rotation=40, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("us (graph replay, median; log scale)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
