"""Reads llama.cpp's `llama-bench -o md` tables (the charts' peer figures)."""
import os
import re


def tg128_by_depth(path):
    """{depth: tokens/s} of the `tg128` rows (`tg128 @ d512`; plain `tg128` is depth 0); empty
    when the file is missing (a call whose llama.cpp build did not finish)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as fh:
        for line in fh:
            m = re.search(r"\|\s*tg128(?: @ d(\d+))?\s*\|\s*([\d.]+)", line)
            if m:
                out[int(m.group(1) or 0)] = float(m.group(2))
    return out
