"""What ``litm chart`` draws: the before/after picture from a measured profile (:func:`litm.rag.rank_chart`), as
a table, a PNG and an offline HTML page with the PNG inline.

With no argument it charts the profile litm ships: the committed Gemma 3 270M benchmark's accuracy in each
of 10 slots (measured, with Wilson intervals). ``litm chart PROFILE`` charts a profile written by
``litm probe`` or ``litm bench``; ``--builtin pyramid`` charts a built-in shape, labelled as assumed.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from litm.eval._html import CSS, esc, img_tag
from litm.eval._plots import pyplot
from litm.placement import PositionProfile
from litm.rag import RankChart
from litm.util._files import atomic_write

__all__ = ["bundled_profile", "write_chart"]


def bundled_profile() -> PositionProfile:
    """The committed Gemma 3 270M k=10 slot-accuracy profile shipped in ``litm/data``."""
    text = (resources.files("litm") / "data" / "profile-gemma3-270m-nq-k10.json").read_text(encoding="utf-8")
    return PositionProfile.from_dict(json.loads(text))


def _png(chart: RankChart, path: Path) -> None:
    plt = pyplot()
    ranks = list(range(1, chart.n + 1))
    fig, ax = plt.subplots(figsize=(8, 4.2))
    for values, slots, label, colour, shift in (
        (chart.before, chart.before_slots, "rank order (before)", "#999999", -0.18),
        (chart.after, chart.after_slots, f"{chart.strategy} (after)", "#2a7ab9", 0.18),
    ):
        xs = [r + shift for r in ranks]
        errors = None
        if chart.intervals is not None:
            lo = [v - chart.intervals[s - 1][0] for v, s in zip(values, slots, strict=True)]
            hi = [chart.intervals[s - 1][1] - v for v, s in zip(values, slots, strict=True)]
            errors = [lo, hi]
        ax.bar(xs, values, width=0.36, color=colour, label=label, yerr=errors, capsize=2,
               error_kw={"ecolor": "#555555", "elinewidth": 0.8})
        for x, v, s in zip(xs, values, slots, strict=True):
            ax.annotate(
                f"s{s}", (x, v), ha="center", va="bottom", fontsize=7, xytext=(0, 2), textcoords="offset points"
            )
    ax.set_xticks(ranks)
    ax.set_xlabel("retrieval rank (1 = best); sN = the slot it lands in")
    interval = " (Wilson 95%)" if chart.intervals is not None else ""
    ax.set_ylabel(f"measured accuracy{interval}" if chart.measured else "assumed weight (not measured)")
    measured = "measured" if chart.measured else "ASSUMED shape, not a measurement"
    ax.set_title(f"{chart.profile}: the slot each rank lands in ({measured})", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_chart(chart: RankChart, out: Path) -> tuple[Path, Path]:
    """Write ``chart.png`` and ``chart.html`` (the PNG inline, the table, the provenance) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    png, page = out / "chart.png", out / "chart.html"
    _png(chart, png)
    unit = "accuracy" if chart.measured else "weight (assumed)"
    rows = "".join(
        f"<tr><td>{r + 1}</td><td>{chart.before_slots[r]}</td><td>{chart.before[r]:.3f}</td>"
        f"<td>{chart.after_slots[r]}</td><td>{chart.after[r]:.3f}</td></tr>"
        for r in range(chart.n)
    )
    body = (
        f"<h1>Before / after: {esc(chart.profile)}</h1><p class='box'>{esc(chart.label)}; source: "
        f"{esc(chart.source)}. {chart.n} ranked documents, rank order vs {esc(chart.strategy)}. Placement moves "
        "ranks between slots: the average over all ranks is the same either way; what changes is which rank gets "
        f"the better slots.</p>{img_tag(png)}<table><tr><th>rank</th><th>slot before</th><th>{unit} before</th>"
        f"<th>slot after</th><th>{unit} after</th></tr>{rows}</table><p>Expected {unit} when the answer's rank "
        f"follows p(r) ~ 1/r: rank order {chart.expected_before:.3f}, {esc(chart.strategy)} "
        f"{chart.expected_after:.3f} ({chart.expected_after - chart.expected_before:+.3f}).</p>"
    )
    atomic_write(page, f"<!doctype html><meta charset='utf-8'><title>litm chart</title><style>{CSS}</style>{body}\n")
    return png, page
