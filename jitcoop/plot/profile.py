"""Two profiles of one workload (decode variants, `jitcoop profile A.spv --compare B.spv`) as bar
charts: ns per element of each callback role and path, and the milliseconds of the collective
instructions and of the whole dispatch (the rows of jitcoop.profile.compare_rows)."""
from __future__ import annotations

import numpy as np

from ..profile import compare_rows
from .mpl import pyplot


def profile_comparison(a, b, name_a: str = "A", name_b: str = "B"):
    """A Figure of two ProfileReports (`run.profile` of dispatch(..., profile=True)): left, ns
    per element per callback role / path (absent when neither shader has callbacks); right,
    ms of the collective instructions and of the dispatch. Each bar is labelled with its
    value; `ax.containers` hold the bars (A first, then B)."""
    rows = compare_rows(a, b)
    per_elem = [r for r in rows if r["ea"] is not None and (r["na"] is not None or r["nb"] is not None)]
    times = [r for r in rows if r["ea"] is None]
    plt = pyplot()
    panels = [p for p in ((per_elem, "ns per element"), (times, "ms")) if p[0]]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 0.6 * max(len(p[0]) for p in panels) + 2.5),
                             squeeze=False)
    for ax, (rs, unit) in zip(axes[0], panels):
        y = np.arange(len(rs))
        h = 0.38
        for k, (key, name, color) in enumerate((("na", name_a, "#4c9be8"), ("nb", name_b, "#f2b134"))):
            vals = [r[key] or 0.0 for r in rs]
            bars = ax.barh(y + (k - 0.5) * h, vals, h, label=name, color=color)
            ax.bar_label(bars, labels=[f"{v:.1f}" if r[key] is not None else "-" for v, r in zip(vals, rs)],
                         fontsize=7, padding=2)
        ax.set_yticks(y, [r["what"].replace(" (ms)", "") for r in rs], fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(unit)
        ax.margins(x=0.2)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="upper right", fontsize=8, ncol=2)
    fig.suptitle(f"A = {name_a}   B = {name_b}", fontsize=9, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.9))
    return fig
