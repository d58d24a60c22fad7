"""Grouped bars of times as % of each case's floor (floor time / time), labelled with the times:
the drawing the GEMV charts share."""


def floor_bars(ax, rows, series, floor_at, width, label_fmt="{:.1f}"):
    """`rows`: case -> tuple of times (None: not timed) with the floor at `floor_at`; `series`:
    (label, index into the tuple, colour). Draws one bar a series a case, centred on the case."""
    cases = list(rows)
    for i, (label, k, color) in enumerate(series):
        off = (i - (len(series) - 1) / 2) * width
        xs = [j + off for j in range(len(cases))]
        us = [rows[c][k] for c in cases]
        ys = [100.0 * rows[c][floor_at] / u if u else 0 for c, u in zip(cases, us)]
        bars = ax.bar(xs, ys, width, label=label, color=color)
        for b, y, u in zip(bars, ys, us):
            if u:
                ax.text(b.get_x() + b.get_width() / 2, y, label_fmt.format(u), ha="center",
                        va="bottom", fontsize=7)
    return cases
