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


def draw_tokens_panel(ax, path, title, label="llama-bench tg128"):
    """Draws llama-bench's tg128 by depth from `path` and twice it (issue 16's goal) on `ax`,
    then titles, labels and a legend for a decode tokens/s against position panel."""
    lb = tg128_by_depth(path)
    depths = sorted(lb)
    ax.plot(depths, [lb[d] for d in depths], "o-", color="C0", label=label)
    ax.plot(depths, [2 * lb[d] for d in depths], ":", color="C0", label="2x llama-bench (the goal)")
    ax.set_title(title)
    ax.set_xlabel("position of the decoded tokens (llama-bench: depth)")
    ax.set_ylabel("decode tokens/s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
