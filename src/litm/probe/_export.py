"""What a probe hands on: a versioned :class:`~litm.placement._profile.PositionProfile`, text tables, and diffs.

The profile's points are the measured accuracy per depth, pooled over the lengths the model handles
(up to its effective length; all lengths when none qualifies), so the ``profile`` placement strategy
puts the best document where this model, with this prompt layout, actually finds things. The token
gate reads ``metadata["recommended_max_input_tokens"]`` and ``metadata["effective_context_length"]``;
``metadata["probe"]`` holds the evidence (per-cell counts and intervals, dead zone, controls, settings),
which ``litm probe diff`` compares with exact tests.

Example:
    >>> from litm.probe._analysis import analyze
    >>> rows = [{"kind": "trial", "task": "needle", "length": 512, "depth": d, "layout": "plain", "hit": True,
    ...          "miss": None, "observations": [[d, True]]} for d in (0.0, 0.5, 1.0)]
    >>> p = to_profile(analyze(rows)["needle"], model="demo")
    >>> [w for _, w in p.points], p.metadata["recommended_max_input_tokens"]
    ([1.0001, 1.0, 1.0001], 512)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from litm._version import __version__
from litm.errors import ProbeError
from litm.eval._stats import Cell, fisher_two_sided, round_p
from litm.placement._profile import PositionProfile
from litm.probe._analysis import TaskAnalysis

__all__ = ["ProfileDiff", "accuracy_table", "diff_profiles", "to_profile"]

PROBE_METADATA_VERSION = 1


def recommended_max_input_tokens(a: TaskAnalysis, context_window: int | None = None) -> tuple[int | None, str]:
    """The token budget to recommend, and why: the effective length, else the shortest length (flagged)."""
    if not a.lengths:
        return None, "no trials"
    if a.effective_length is not None:
        value, why = a.effective_length, "effective context length"
        if a.effective_length == a.lengths[-1]:
            why += "; it is the longest length measured, so probe longer lengths to raise it"
    else:
        value, why = a.lengths[0], "the shortest length measured: even it misses the effective-length bar"
    if context_window and value > context_window:
        value, why = context_window, "the model's context window"
    return value, why


def _profile_lengths(a: TaskAnalysis) -> list[int]:
    if a.effective_length is None:
        return list(a.lengths)
    return [length for length in a.lengths if length <= a.effective_length]


def to_profile(
    a: TaskAnalysis,
    *,
    model: str | None = None,
    settings: Mapping[str, Any] | None = None,
    context_window: int | None = None,
    others: Mapping[str, TaskAnalysis] | None = None,
) -> PositionProfile:
    """The measured position profile of ``a`` (weights = accuracy per depth) with the evidence as metadata."""
    if not a.depths:
        raise ProbeError(f"task {a.task!r} has no trials to make a profile from")
    lengths = _profile_lengths(a)
    weights = {d: sum((a.table.get((length, d), Cell(0, 0)) for length in lengths), Cell(0, 0)) for d in a.depths}
    recommended, why = recommended_max_input_tokens(a, context_window)
    evidence = summary(a)
    evidence.update(
        {
            "format_version": PROBE_METADATA_VERSION,
            "profile_lengths": lengths,
            "profile_cells": [{"depth": d, **c.to_dict()} for d, c in weights.items()],
            "recommended_reason": why,
            "weight_rule": "accuracy per depth + 1e-4 x |2 x depth - 1| (breaks exact ties toward the edges)",
            "settings": dict(settings or {}),
            "litm_version": __version__,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    if others:
        evidence["other_tasks"] = {t: summary(o) for t, o in others.items() if t != a.task}
    return PositionProfile(
        points=tuple((d, _weight(d, c)) for d, c in weights.items()),
        tie_break="end",
        name=f"probe:{a.task}",
        model=model,
        metadata={
            "source": "litm probe",
            "task": a.task,
            "recommended_max_input_tokens": recommended,
            "effective_context_length": a.effective_length,
            "probe": evidence,
        },
    )


def _weight(depth: float, cell: Cell) -> float:
    """Accuracy, plus a tie-breaker far below one trial's worth (1e-4 x distance from the middle).

    Equal measured accuracies (a flat curve, or a few trials) then send the best document to the edge,
    as the literature's U-shape suggests, instead of to whichever tied slot is nearest the question.
    """
    return round(cell.acc + 1e-4 * abs(2 * depth - 1), 6)


def summary(a: TaskAnalysis) -> dict[str, object]:
    """A JSON-ready summary of one task: cells, pooled curve, dead zone, effective length, controls."""
    return {
        "task": a.task,
        "lengths": list(a.lengths),
        "depths": list(a.depths),
        "cells": [{"length": ln, "depth": d, **c.to_dict()} for (ln, d), c in sorted(a.table.items())],
        "pooled": [{"depth": d, **c.to_dict()} for d, c in a.pooled.items()],
        "dead_zone": a.dead_zone_pooled.to_dict(),
        "dead_zone_by_length": {str(ln): z.to_dict() for ln, z in a.dead_zones.items()},
        "effective_context_length": a.effective_length,
        "baseline_accuracy": round(a.baseline, 4),
        "ratio": a.ratio,
        "mid_depth": {str(ln): c.to_dict() for ln, c in a.mid.items()},
        "closed_book": a.closed_book.to_dict(),
        "edge_check": a.edge_check.to_dict(),
        "copy_first_rate": round(a.copy_first_rate, 4),
        "copy_last_rate": round(a.copy_last_rate, 4),
        "layout_effect": None
        if a.layout_effect is None
        else {
            "best": a.layout_effect[0],
            "best_cell": a.layout_effect[1].to_dict(),
            "worst": a.layout_effect[2],
            "worst_cell": a.layout_effect[3].to_dict(),
            "p_two_sided": round_p(a.layout_effect[4], 6),
        },
        "misses": {f"{d:g}": dict(c) for d, c in a.misses.items()},
        "by_layout": {k: {f"{d:g}": c.to_dict() for d, c in v.items()} for k, v in a.by_layout.items()},
        "findings": list(a.findings),
    }


def accuracy_table(a: TaskAnalysis) -> str:
    """A text table: one row per length, one column per depth, ``acc [lo, hi]``; pooled row last."""
    head = f"{'length':>8} " + " ".join(f"{f'depth {d:g}':>19}" for d in a.depths)
    lines = [head]
    for length in a.lengths:
        cells = []
        for d in a.depths:
            c = a.table.get((length, d), Cell(0, 0))
            lo, hi = c.ci
            cells.append(f"{f'{c.acc:.2f} [{lo:.2f},{hi:.2f}]':>19}")
        lines.append(f"{length:>8} " + " ".join(cells))
    pooled = []
    for d in a.depths:
        c = a.pooled[d]
        lo, hi = c.ci
        pooled.append(f"{f'{c.acc:.2f} [{lo:.2f},{hi:.2f}]':>19}")
    lines.append(f"{'all':>8} " + " ".join(pooled))
    return "\n".join(lines)


@dataclass(frozen=True)
class ProfileDiff:
    """Two profiles compared depth by depth (with Fisher p-values when both carry probe counts)."""

    a: PositionProfile
    b: PositionProfile
    rows: tuple[tuple[float, float | None, float | None, float | None], ...]

    def to_text(self) -> str:
        la, lb = _label(self.a, "A"), _label(self.b, "B")
        lines = [f"A = {la}", f"B = {lb}", f"{'depth':>6} {'A':>12} {'B':>12} {'B-A':>7} {'p (Fisher)':>11}"]
        for d, wa, wb, p in self.rows:
            fa = "-" if wa is None else f"{wa:.2f}"
            fb = "-" if wb is None else f"{wb:.2f}"
            delta = "-" if wa is None or wb is None else f"{wb - wa:+.2f}"
            mark = "" if p is None else (" *" if p < 0.05 else "")
            fp = "-" if p is None else f"{p:.3f}{mark}"
            lines.append(f"{d:>6g} {fa:>12} {fb:>12} {delta:>7} {fp:>11}")
        for key, title in (
            ("effective_context_length", "effective context length"),
            ("recommended_max_input_tokens", "recommended max_input_tokens"),
        ):
            lines.append(f"{title}: A {self.a.metadata.get(key)}  B {self.b.metadata.get(key)}")
        za, zb = _dead(self.a), _dead(self.b)
        lines.append(f"dead zone: A {za}  B {zb}")
        return "\n".join(lines)


def _label(p: PositionProfile, default: str) -> str:
    task = p.metadata.get("task", "")
    return f"{p.model or p.name or default}" + (f" ({task})" if task else "")


def _probe_metadata(p: PositionProfile) -> Mapping[str, object]:
    """The ``probe`` section a probe-made profile carries (a profile from elsewhere has none)."""
    probe = p.metadata.get("probe")
    return probe if isinstance(probe, dict) else {}


def _dead(p: PositionProfile) -> str:
    zone = _probe_metadata(p).get("dead_zone")
    depths = zone.get("depths") if isinstance(zone, dict) else None
    if not isinstance(depths, list):
        return "n/a"
    return ", ".join(f"{d:g}" for d in depths) or "none"


def _counts(p: PositionProfile) -> dict[float, tuple[int, int]]:
    cells = _probe_metadata(p).get("profile_cells")
    if not isinstance(cells, list):
        return {}
    return {
        float(c["depth"]): (int(c["hits"]), int(c["n"]))
        for c in cells
        if isinstance(c, dict) and "hits" in c and "n" in c
    }


def diff_profiles(a: PositionProfile, b: PositionProfile) -> ProfileDiff:
    """Compare two profiles (two models, or two versions of one) at the union of their depths."""
    ca, cb = _counts(a), _counts(b)
    depths = sorted({x for x, _ in a.points} | {x for x, _ in b.points})
    rows = []
    for d in depths:
        wa = a.weight_at(d)
        wb = b.weight_at(d)
        p = None
        if d in ca and d in cb:
            p = fisher_two_sided(ca[d][0], ca[d][1], cb[d][0], cb[d][1])
        rows.append((d, wa, wb, p))
    return ProfileDiff(a, b, tuple(rows))
