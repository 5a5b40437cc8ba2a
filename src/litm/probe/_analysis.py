"""From rows to findings: accuracy cells with intervals, the dead zone, effective length, artefact checks.

* **Accuracy** per (length, depth) and per depth pooled over lengths, each with a Wilson 95% interval.
* **Dead zone**: the inner depths whose accuracy is significantly below the better edge (one-sided
  Fisher exact test, ``alpha`` 0.05), per length and pooled.
* **Effective context length**: the longest length, going up from the shortest, whose mid-depth
  accuracy stays at least ``ratio`` (default 0.85) of the model's own short-context accuracy (all
  depths of the shortest length). Relative to the model itself, unlike RULER's fixed 85.6 threshold,
  so a small model is judged against what it can do at all. ``recommended_max_input_tokens`` follows.
* **Is the curve real?** An edge that is significantly *below* the middle is checked against the
  layouts (does it recover when the haystack is buffered away from the prompt's edges?) and the miss
  classes (are its misses question echoes?). Copies of the first or last item are counted, since a
  model that always returns the first value scores "perfectly" at depth 0. The closed-book control
  says what the model answers without any context.

Example:
    >>> rows = [{"kind": "trial", "task": "needle", "length": 512, "depth": d, "layout": "plain", "hit": h,
    ...          "miss": None if h else "other", "observations": [[d, h]]}
    ...         for d, hs in ((0.0, [1] * 10), (0.5, [0] * 8 + [1] * 2), (1.0, [1] * 10)) for h in hs]
    >>> a = analyze(rows)["needle"]
    >>> a.dead_zone_pooled.depths
    (0.5,)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from litm.errors import ProbeError
from litm.eval._stats import Cell, fisher_less, fisher_two_sided, round_p
from litm.probe._rows import ProbeRow, depth_of

__all__ = ["Cell", "DeadZone", "EdgeCheck", "TaskAnalysis", "analyze", "dead_zone", "effective_length"]

DEFAULT_ALPHA = 0.05
DEFAULT_RATIO = 0.85
_COPY_EDGE = 0.05  # a copied item within 5% of an end counts as "the first" / "the last" item
_MID = (0.25, 0.75)


@dataclass(frozen=True)
class DeadZone:
    """Inner depths significantly below the better edge (``edge_depth``), with their one-sided p-values."""

    edge_depth: float | None
    depths: tuple[float, ...]
    p_values: Mapping[float, float]

    @property
    def found(self) -> bool:
        return bool(self.depths)

    def describe(self) -> str:
        if not self.depths:
            return "none detected"
        return f"depths {', '.join(f'{d:g}' for d in self.depths)} (below the edge at {self.edge_depth:g})"

    def to_dict(self) -> dict[str, object]:
        return {
            "edge_depth": self.edge_depth,
            "depths": list(self.depths),
            "p_values": {f"{d:g}": round_p(p) for d, p in self.p_values.items()},
        }


def dead_zone(
    cells: Mapping[float, Cell], alpha: float = DEFAULT_ALPHA, test: Callable[[int, int, int, int], float] = fisher_less
) -> DeadZone:
    """Inner depths whose accuracy is significantly below the better of the two edge depths.

    ``test(hits_a, n_a, hits_b, n_b)`` is the one-sided p-value of "a below b" (Fisher's exact test; the
    sequential rule passes a cached one).
    """
    depths = sorted(d for d, c in cells.items() if c.n)
    if len(depths) < 3:
        return DeadZone(None, (), {})
    first, last = cells[depths[0]], cells[depths[-1]]
    # The better edge; a tie goes to the end (next to the question), as placement's default tie-break does.
    edge = depths[0] if first.acc > last.acc else depths[-1]
    e = cells[edge]
    p = {d: test(cells[d].hits, cells[d].n, e.hits, e.n) for d in depths[1:-1]}
    return DeadZone(edge, tuple(d for d in depths[1:-1] if p[d] < alpha), p)


def _mid_depths(depths: Sequence[float]) -> list[float]:
    inner = [d for d in depths if d not in (min(depths), max(depths))]
    mid = [d for d in inner if _MID[0] <= d <= _MID[1]]
    return mid or inner or list(depths)


def _pool(table: Mapping[tuple[int, float], Cell], length: int, depths: Sequence[float]) -> Cell:
    # Plain integer sums: the sequential rule evaluates this thousands of times per round.
    cells = [table[(length, d)] for d in depths if (length, d) in table]
    return Cell(sum(c.hits for c in cells), sum(c.n for c in cells))


def effective_length(
    table: Mapping[tuple[int, float], Cell], ratio: float = DEFAULT_RATIO
) -> tuple[int | None, float, dict[int, Cell]]:
    """(effective length or None, the short-context baseline accuracy, mid-depth cell per length).

    Lengths are walked upwards; the first one whose mid-depth accuracy drops below ``ratio x baseline``
    ends the walk (a longer length that recovers by chance does not count).
    """
    lengths = sorted({length for length, _ in table})
    depths = sorted({d for _, d in table})
    if not lengths:
        return None, 0.0, {}
    base = _pool(table, lengths[0], depths)
    mids = _mid_depths(depths)
    mid = {length: _pool(table, length, mids) for length in lengths}
    if base.acc == 0:
        return None, 0.0, mid
    best: int | None = None
    for length in lengths:
        if mid[length].n and mid[length].acc >= ratio * base.acc:
            best = length
        else:
            break
    return best, base.acc, mid


@dataclass(frozen=True)
class EdgeCheck:
    """Is an edge dip real? Per-layout edge accuracy, echo share of edge misses, and a verdict."""

    dip_edges: tuple[float, ...]
    layout_edges: Mapping[str, Cell]
    echo_share_edges: float
    echo_share_inner: float
    verdict: str

    def to_dict(self) -> dict[str, object]:
        return {
            "dip_edges": list(self.dip_edges),
            "layout_edges": {k: v.to_dict() for k, v in self.layout_edges.items()},
            "echo_share_edges": round(self.echo_share_edges, 4),
            "echo_share_inner": round(self.echo_share_inner, 4),
            "verdict": self.verdict,
        }


@dataclass
class TaskAnalysis:
    """Everything the report, the profile and ``probe diff`` need about one task."""

    task: str
    lengths: tuple[int, ...]
    depths: tuple[float, ...]
    table: dict[tuple[int, float], Cell]
    pooled: dict[float, Cell]
    by_layout: dict[str, dict[float, Cell]]
    misses: dict[float, Counter[str]]
    closed_book: Cell
    dead_zones: dict[int, DeadZone]
    dead_zone_pooled: DeadZone
    effective_length: int | None
    baseline: float
    mid: dict[int, Cell]
    ratio: float
    edge_check: EdgeCheck
    copy_first_rate: float
    copy_last_rate: float
    layout_effect: tuple[str, Cell, str, Cell, float] | None = None
    findings: list[str] = field(default_factory=list)


def _nearest(depth: float, grid: Sequence[float]) -> float:
    return min(grid, key=lambda g: (abs(g - depth), g))


def _edge_check(
    task_rows: Sequence[ProbeRow], pooled: Mapping[float, Cell], depths: Sequence[float], alpha: float
) -> EdgeCheck:
    edges = (min(depths), max(depths))
    inner = [d for d in depths if d not in edges]
    best_inner = max(inner, key=lambda d: pooled[d].acc) if inner else None
    dips: tuple[float, ...] = ()
    if best_inner is not None:
        b = pooled[best_inner]
        dips = tuple(e for e in edges if fisher_less(pooled[e].hits, pooled[e].n, b.hits, b.n) < alpha)
    layout_edges: dict[str, Cell] = {}
    for r in task_rows:
        if r["depth"] in dips or (not dips and r["depth"] in edges):
            layout_edges[r["layout"]] = layout_edges.get(r["layout"], Cell(0, 0)) + Cell(int(bool(r["hit"])), 1)
    edge_miss = [r for r in task_rows if r["depth"] in edges and not r["hit"]]
    inner_miss = [r for r in task_rows if r["depth"] not in edges and not r["hit"]]
    echo_e = sum(r.get("miss") == "echo" for r in edge_miss) / len(edge_miss) if edge_miss else 0.0
    echo_i = sum(r.get("miss") == "echo" for r in inner_miss) / len(inner_miss) if inner_miss else 0.0
    if not dips:
        verdict = "no edge is significantly below the middle"
    else:
        where = " and ".join(f"{e:g}" for e in dips)
        recovered = [
            (a, b)
            for a in layout_edges
            for b in layout_edges
            if a != b
            and fisher_less(layout_edges[a].hits, layout_edges[a].n, layout_edges[b].hits, layout_edges[b].n) < alpha
        ]
        if recovered:
            worse, better = recovered[0]
            verdict = (
                f"edge dip at depth {where} is a layout artefact: the edges do significantly better in the "
                f"'{better}' layout than in '{worse}'"
            )
        elif echo_e >= 0.5 and echo_e >= echo_i:
            verdict = (
                f"edge dip at depth {where} is probably a layout artefact: {echo_e:.0%} of edge misses echo the "
                "question (the needle sits next to a prompt boundary)"
            )
        else:
            verdict = f"edge dip at depth {where} holds across layouts (or too few trials to tell)"
    return EdgeCheck(dips, layout_edges, echo_e, echo_i, verdict)


def _copy_rates(task_rows: Sequence[ProbeRow], depths: Sequence[float]) -> tuple[float, float]:
    """Share of trials (gold not at that end) whose answer copied the first / the last item or span."""
    lo, hi = min(depths), max(depths)
    not_first = [r for r in task_rows if r["depth"] != lo]
    not_last = [r for r in task_rows if r["depth"] != hi]

    def copied(r: ProbeRow, at_start: bool) -> bool:
        pos = r.get("copied_position")
        if pos is None or r.get("hit"):
            return False
        return bool(pos <= _COPY_EDGE) if at_start else bool(pos >= 1 - _COPY_EDGE)

    first = sum(copied(r, True) for r in not_first) / len(not_first) if not_first else 0.0
    last = sum(copied(r, False) for r in not_last) / len(not_last) if not_last else 0.0
    return first, last


def analyze_task(
    task: str, rows: Iterable[ProbeRow], *, alpha: float = DEFAULT_ALPHA, ratio: float = DEFAULT_RATIO
) -> TaskAnalysis:
    """Analyse one task's rows (trials and closed-book controls)."""
    all_rows = [r for r in rows if r.get("task") == task]
    trials = [r for r in all_rows if r.get("kind") == "trial"]
    closed = [r for r in all_rows if r.get("kind") == "closed_book"]
    depths = tuple(sorted({depth_of(r) for r in trials}))
    lengths = tuple(sorted({int(r["length"]) for r in trials}))
    table: dict[tuple[int, float], Cell] = {}
    by_layout: dict[str, dict[float, Cell]] = {}
    misses: dict[float, Counter[str]] = {d: Counter() for d in depths}
    for r in trials:
        obs = r.get("observations") or [[depth_of(r), r["hit"]]]
        for d, h in obs:
            key = (int(r["length"]), _nearest(float(d), depths))
            table[key] = table.get(key, Cell(0, 0)) + Cell(int(bool(h)), 1)
        lay = by_layout.setdefault(str(r["layout"]), {})
        lay[depth_of(r)] = lay.get(depth_of(r), Cell(0, 0)) + Cell(int(bool(r["hit"])), 1)
        if not r["hit"]:
            misses[depth_of(r)][str(r.get("miss") or "other")] += 1
    pooled = {d: sum((table.get((length, d), Cell(0, 0)) for length in lengths), Cell(0, 0)) for d in depths}
    zones = {length: dead_zone({d: table.get((length, d), Cell(0, 0)) for d in depths}, alpha) for length in lengths}
    eff, base, mid = effective_length(table, ratio)
    check = _edge_check(trials, pooled, depths, alpha) if depths else EdgeCheck((), {}, 0.0, 0.0, "no trials")
    first, last = _copy_rates(trials, depths) if depths else (0.0, 0.0)
    closed_cell = Cell(sum(bool(r["hit"]) for r in closed), len(closed))
    totals = {name: sum(cells.values(), Cell(0, 0)) for name, cells in by_layout.items()}
    effect = None
    if len(totals) >= 2:
        best = max(totals, key=lambda k: totals[k].acc)
        worst = min(totals, key=lambda k: totals[k].acc)
        b, w = totals[best], totals[worst]
        effect = (best, b, worst, w, fisher_two_sided(b.hits, b.n, w.hits, w.n))
    out = TaskAnalysis(
        task=task,
        lengths=lengths,
        depths=depths,
        table=table,
        pooled=pooled,
        by_layout=by_layout,
        misses=misses,
        closed_book=closed_cell,
        dead_zones=zones,
        dead_zone_pooled=dead_zone(pooled, alpha),
        effective_length=eff,
        baseline=base,
        mid=mid,
        ratio=ratio,
        edge_check=check,
        copy_first_rate=first,
        copy_last_rate=last,
        layout_effect=effect,
    )
    out.findings = _findings(out)
    return out


def _findings(a: TaskAnalysis) -> list[str]:
    """Plain-language statements of what this task's curve does and does not show."""
    out: list[str] = []
    if not a.lengths:
        return ["no trials yet"]
    out.append(f"dead zone (pooled over lengths): {a.dead_zone_pooled.describe()}")
    if a.baseline == 0:
        out.append("the model fails even at the shortest length: no effective length can be measured")
    elif a.effective_length is None:
        out.append(
            f"mid-depth accuracy is below {a.ratio:.0%} of the short-context accuracy ({a.baseline:.2f}) "
            f"already at {a.lengths[0]} tokens: effective length is below the shortest length measured"
        )
    else:
        more = " (the longest measured: the model may hold further)" if a.effective_length == a.lengths[-1] else ""
        out.append(
            f"effective context length: {a.effective_length} tokens{more}, mid-depth accuracy >= "
            f"{a.ratio:.0%} of the short-context {a.baseline:.2f}"
        )
    out.append(a.edge_check.verdict)
    if a.layout_effect is not None and a.layout_effect[4] < DEFAULT_ALPHA:
        best, b, worst, w, p = a.layout_effect
        out.append(
            f"the prompt layout matters: '{best}' {b.acc:.2f} ({b.hits}/{b.n}) vs '{worst}' {w.acc:.2f} "
            f"({w.hits}/{w.n}), p = {p:.3g}; the pooled curve averages layouts, so probe with the layout you use "
            "(--layouts, --template)"
        )
    if a.copy_first_rate >= 0.2:
        out.append(
            f"{a.copy_first_rate:.0%} of trials with the answer elsewhere returned the first item or span: "
            "hits at depth 0 may be copies, not retrieval"
        )
    if a.copy_last_rate >= 0.2:
        out.append(
            f"{a.copy_last_rate:.0%} of trials with the answer elsewhere returned the last item or span: "
            "hits at depth 1 may be copies, not retrieval"
        )
    misses = sum(sum(c.values()) for c in a.misses.values())
    truncated = sum(c["truncated"] for c in a.misses.values())
    if truncated and truncated >= 0.2 * misses:
        out.append(
            f"{truncated} of {misses} misses ran out of max_tokens inside the first line: the answer may have been "
            "on its way, so these cells understate the model; rerun with a larger --max-tokens"
        )
    if a.closed_book.n:
        out.append(f"closed-book control: {a.closed_book.hits}/{a.closed_book.n} answered without the context")
    return out


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


#: The fields of a results row the analysis reads, with a test and what the test accepts.
_ROW_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "task": (lambda v: isinstance(v, str), "a string"),
    "kind": (lambda v: v in ("trial", "closed_book"), "'trial' or 'closed_book'"),
    "hit": (lambda v: v in (True, False), "true or false (or 1 or 0)"),
}
_TRIAL_FIELDS: dict[str, tuple[Callable[[object], bool], str]] = {
    "depth": (lambda v: _is_number(v) and 0 <= v <= 1, "a depth in [0, 1]"),  # type: ignore[operator]
    "length": (lambda v: _is_number(v) and v >= 1, "a length in tokens"),  # type: ignore[operator]
    "layout": (lambda v: isinstance(v, str), "a string"),
}


def check_row(row: Mapping[str, object], number: int) -> None:
    """Raise :class:`~litm.probe.ProbeError` unless results row ``number`` has the fields the analysis reads.

    >>> check_row({"task": "needle", "kind": "closed_book", "hit": False}, 1)
    >>> check_row({"task": "needle", "kind": "trial", "hit": True, "depth": 0.5, "layout": "plain"}, 7)
    Traceback (most recent call last):
    ...
    litm.errors.ProbeError: results row 7: 'length' is missing; expected a length in tokens
    """
    if not isinstance(row, Mapping):
        raise ProbeError(f"results row {number}: expected a JSON object, got {type(row).__name__}")
    fields = _ROW_FIELDS | (_TRIAL_FIELDS if row.get("kind") == "trial" else {})
    for name, (ok, what) in fields.items():
        if name not in row:
            raise ProbeError(f"results row {number}: {name!r} is missing; expected {what}")
        if not ok(row[name]):
            raise ProbeError(f"results row {number}: {name!r} is {row[name]!r}; expected {what}")


def analyze(
    rows: Iterable[ProbeRow],
    *,
    tasks: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA,
    ratio: float = DEFAULT_RATIO,
) -> dict[str, TaskAnalysis]:
    """One :class:`TaskAnalysis` per task (in ``tasks`` order, else in order of first appearance).

    A row without the fields the analysis reads (a damaged or foreign results file) is a
    :class:`~litm.probe.ProbeError` naming the row and the field.
    """
    rows = list(rows)
    for i, row in enumerate(rows, start=1):
        check_row(row, i)
    names = list(tasks) if tasks else list(dict.fromkeys(str(r["task"]) for r in rows))
    return {t: analyze_task(t, rows, alpha=alpha, ratio=ratio) for t in names}
