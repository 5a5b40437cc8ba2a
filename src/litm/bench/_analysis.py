"""Analysis of a strategy benchmark: slot accuracy, derived strategy accuracy, gap recovered, checks.

* **Slot accuracy**: gold passage in final slot ``s`` (Wilson 95% intervals), over the questions that
  finished all ``k`` slots.
* **Derived accuracy** of strategy ``X`` at gold rank ``r``: per question, the hit observed with the gold
  passage in the slot ``X`` sends rank ``r`` to (``random``: that question's seeded shuffle; ``profile``:
  the profile measured on the *other* fold of questions).
* **Gap recovered** (the headline): under a retriever rank distribution ``p(r)``, a strategy's expected
  accuracy ``E = sum_r p(r) acc_X(r)`` placed on the worst-to-best slot scale, ``(E - worst) / (best -
  worst)``: 0 = the gold passage always in the model's worst slot, 1 = always in its best slot (the
  limit). Two distributions are stated: ``uniform`` over 1..k and ``decaying`` ``p(r) ~ 1/r``.
* **Direct check**: end-to-end runs of each strategy versus the hit the derivation predicts for the same
  question and slot.

Example:
    >>> rows = [{"phase": "slot", "k": 2, "qid": 1, "fold": 0, "slot": s, "hit": s == 2} for s in (1, 2)]
    >>> [c.hits for c in slot_cells(rows, 2)]
    [0, 1]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from litm.bench._ablation import ablation_cells, ablation_vs_plain
from litm.bench._design import FIXED_STRATEGIES, STRATEGIES, arrangement, seed_of
from litm.bench._rows import Rows, numeric
from litm.errors import InvalidOptionError
from litm.eval._stats import Cell, bootstrap_mean_ci, fisher_less, round_p
from litm.placement import PositionProfile

__all__ = [
    "RANK_DISTRIBUTIONS",
    "ablation_cells",
    "ablation_vs_plain",
    "best_fixed",
    "call_totals",
    "dead_zone_test",
    "derived_cells",
    "direct_check",
    "expected_gains",
    "fold_profiles",
    "gain_intervals",
    "gap_recovered",
    "middle_slots",
    "question_folds",
    "question_orders",
    "rank_weights",
    "slot_cells",
    "slot_hits",
    "slot_values",
    "summarize",
]

RANK_DISTRIBUTIONS: dict[str, str] = {
    "uniform": "gold passage equally likely at every retrieval rank 1..k (a sanity check: any reordering is a "
    "permutation of slots, so every strategy has the same expected accuracy, the mean slot accuracy)",
    "decaying": "p(rank r) proportional to 1/r: a retriever that usually ranks the gold passage near the top",
}


def rank_weights(name: str, k: int) -> list[float]:
    """Probabilities of gold ranks 1..k under a named retriever rank distribution.

    >>> [round(w, 3) for w in rank_weights("decaying", 3)]
    [0.545, 0.273, 0.182]
    """
    if name == "uniform":
        raw = [1.0] * k
    elif name == "decaying":
        raw = [1.0 / r for r in range(1, k + 1)]
    else:
        raise InvalidOptionError(f"unknown rank distribution {name!r}; choose from {', '.join(RANK_DISTRIBUTIONS)}")
    total = sum(raw)
    return [w / total for w in raw]


def slot_hits(rows: Rows, k: int, fold: int | None = None) -> dict[str, dict[int, bool]]:
    """``{qid: {slot: hit}}`` for questions with all ``k`` slot prompts finished (optionally one fold)."""
    by: dict[str, dict[int, bool]] = defaultdict(dict)
    folds: dict[str, int] = {}
    for r in rows:
        if r.get("phase") == "slot" and r.get("k") == k:
            by[str(r["qid"])][int(r["slot"])] = bool(r["hit"])
            folds[str(r["qid"])] = int(r.get("fold", 0))
    return {q: s for q, s in by.items() if len(s) == k and (fold is None or folds[q] == fold)}


def slot_values(rows: Rows, k: int, field: str = "hit", fold: int | None = None) -> dict[str, dict[int, float]]:
    """``{qid: {slot: value}}`` of a row field (``hit`` as 0/1, ``likelihood``) for questions with all ``k`` slots.

    A question counts only when every one of its ``k`` slot rows has the field (runs recorded before a
    metric existed lack it).
    """
    by: dict[str, dict[int, float]] = defaultdict(dict)
    folds: dict[str, int] = {}
    for r in rows:
        value = numeric(r, field)
        if r.get("phase") == "slot" and r.get("k") == k and value is not None:
            by[str(r["qid"])][int(r["slot"])] = value
            folds[str(r["qid"])] = int(r.get("fold", 0))
    return {q: s for q, s in by.items() if len(s) == k and (fold is None or folds[q] == fold)}


def middle_slots(k: int) -> list[int]:
    """The central half of ``k`` slots, first and last excluded: the dead zone the tests pool (3-8 of 10).

    >>> middle_slots(10), middle_slots(20)[0], middle_slots(20)[-1]
    ([3, 4, 5, 6, 7, 8], 6, 15)
    """
    lo, hi = k // 4, k - k // 4  # central half, 0-based [lo, hi)
    return [i + 1 for i in range(k) if lo <= i < hi and 0 < i < k - 1]


def question_folds(rows: Rows) -> dict[str, int]:
    """``{qid: fold}`` as recorded in the rows."""
    return {str(r["qid"]): int(r.get("fold", 0)) for r in rows if "qid" in r}


def slot_cells(rows: Rows, k: int, fold: int | None = None) -> list[Cell]:
    """Accuracy with the gold passage in each final slot 1..k."""
    hits = slot_hits(rows, k, fold)
    return [Cell(sum(h[s] for h in hits.values()), len(hits)) for s in range(1, k + 1)]


def fold_profiles(rows: Rows, k: int) -> dict[int, PositionProfile]:
    """The position profile measured on each fold's finished questions (slot accuracy as weights)."""
    out = {}
    for fold in (0, 1):
        cells = slot_cells(rows, k, fold)
        if cells and cells[0].n:
            out[fold] = PositionProfile.from_weights(
                [c.acc for c in cells],
                name=f"measured-fold{fold}",
                metadata={"k": k, "questions": cells[0].n, "source": "litm bench slot accuracy"},
            )
    return out


def _orders(name: str, k: int, qid: str, fold: int, profiles: Mapping[int, PositionProfile]) -> list[int] | None:
    if name == "profile":
        profile = profiles.get(1 - fold)
        return None if profile is None else arrangement(name, k, profile=profile)
    return arrangement(name, k, seed=seed_of(qid))


def question_orders(rows: Rows, k: int, strategies: Sequence[str]) -> dict[str, dict[str, list[int]]]:
    """Per strategy, the order it gives each finished question (``profile``: the other fold's profile)."""
    hits = slot_hits(rows, k)
    folds = question_folds(rows)
    profiles = fold_profiles(rows, k)
    fixed = {name: arrangement(name, k) for name in strategies if name not in ("random", "profile")}
    out: dict[str, dict[str, list[int]]] = {}
    for name in strategies:
        out[name] = {}
        for qid in hits:
            order = fixed.get(name) or _orders(name, k, qid, folds.get(qid, 0), profiles)
            if order is not None:
                out[name][qid] = order
    return out


def derived_cells(rows: Rows, k: int, strategies: Sequence[str] = STRATEGIES) -> dict[str, list[Cell]]:
    """Per strategy, accuracy at gold ranks 1..k derived from the slot measurements (see module doc)."""
    hits = slot_hits(rows, k)
    out: dict[str, list[Cell]] = {}
    for name, orders in question_orders(rows, k, strategies).items():
        counts = [[0, 0] for _ in range(k)]
        for qid, order in orders.items():
            for r in range(1, k + 1):
                counts[r - 1][0] += hits[qid][order.index(r) + 1]
                counts[r - 1][1] += 1
        out[name] = [Cell(a, n) for a, n in counts]
    return out


def gain_intervals(
    rows: Rows,
    k: int,
    distribution: str,
    strategies: Sequence[str] = STRATEGIES,
    *,
    resamples: int = 2000,
    seed: int = 0,
    field: str = "hit",
) -> dict[str, tuple[float, float]]:
    """Paired 95% bootstrap interval of each strategy's expected gain over ``none`` in a slot metric.

    Every question is answered in every slot, so a strategy and ``none`` are compared on the same questions:
    per question, the gain is ``sum_r p(r) (value at X's slot for r - value at none's slot for r)`` (the
    value: ``hit``, or ``likelihood``), and the questions are resampled (seeded, so the interval is
    reproducible). An interval that contains 0 means the run cannot tell the strategy from rank order.
    """
    return {
        name: bootstrap_mean_ci(diffs, resamples=resamples, seed=seed)
        for name, diffs in expected_gains(rows, k, distribution, strategies, field=field).items()
        if diffs
    }


def expected_gains(
    rows: Rows, k: int, distribution: str, strategies: Sequence[str] = STRATEGIES, *, field: str = "hit"
) -> dict[str, list[float]]:
    """Per strategy, each question's expected ``field`` value minus rank order's, under a gold rank distribution."""
    values = slot_values(rows, k, field)
    w = rank_weights(distribution, k)
    orders = question_orders(rows, k, ("none", *[s for s in strategies if s != "none"]))

    def expected(order: list[int], qid: str) -> float:
        return sum(p * values[qid][order.index(r) + 1] for r, p in enumerate(w, 1))

    base = orders["none"]
    return {
        name: [expected(by_q[q], q) - expected(base[q], q) for q in by_q if q in base and q in values]
        for name, by_q in orders.items()
    }


def gap_recovered(
    derived: Mapping[str, Sequence[Cell]], slots: Sequence[Cell], distribution: str
) -> dict[str, dict[str, float]]:
    """Expected accuracy, gain over ``none`` and fraction of the worst-to-best slot gap, per strategy."""
    k = len(slots)
    w = rank_weights(distribution, k)
    worst, best = min(c.acc for c in slots), max(c.acc for c in slots)
    base = sum(p * c.acc for p, c in zip(w, derived.get("none", slots), strict=True))
    out = {}
    for name, cells in derived.items():
        if not cells or not cells[0].n:
            continue
        exp = sum(p * c.acc for p, c in zip(w, cells, strict=True))
        gap = best - worst
        out[name] = {
            "expected_acc": round(exp, 4),
            "gain_over_none": round(exp - base, 4) + 0.0,  # + 0.0 turns -0.0 into 0.0
            "gap_recovered": round((exp - worst) / gap, 4) if gap > 0 else float("nan"),
        }
    return out


def best_fixed(headline: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The fixed strategy with the highest expected accuracy in one headline table (first listed wins ties).

    ``None`` when there is no fixed strategy, or when every strategy ties (as they must under a uniform gold
    rank, where a placement only permutes slots): naming a winner there would be noise.
    """
    fixed = [name for name in headline if name in FIXED_STRATEGIES]
    values = {round(float(v["expected_acc"]), 6) for v in headline.values()}
    if not fixed or len(values) == 1:
        return None
    return max(fixed, key=lambda name: (float(headline[name]["expected_acc"]), -fixed.index(name)))


def dead_zone_test(slots: Sequence[Cell]) -> dict[str, object]:
    """Pooled middle slots (the central half) vs pooled edge slots (first and last), one-sided Fisher test.

    Pooling avoids picking the worst slot after the fact. The same questions fill every slot, so the
    test treats paired answers as independent: read the p-value as a guide, not an exact level.
    """
    mid = middle_slots(len(slots))
    middle = [slots[i - 1] for i in mid]
    edge = [slots[0], slots[-1]]
    m = Cell(sum(c.hits for c in middle), sum(c.n for c in middle))
    e = Cell(sum(c.hits for c in edge), sum(c.n for c in edge))
    p = fisher_less(m.hits, m.n, e.hits, e.n)
    return {
        "middle_slots": mid,
        "middle": m.to_dict(),
        "edges": e.to_dict(),
        "p_value": round_p(p),
        "dead_zone": p < 0.05,
    }


def direct_check(rows: Rows, k: int) -> dict[str, dict[str, object]]:
    """Per strategy: direct end-to-end accuracy vs the accuracy the slot derivation predicts, same rows."""
    hits = slot_hits(rows, k)
    folds = question_folds(rows)
    profiles = fold_profiles(rows, k)
    by: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    distinct: list[tuple[bool, bool]] = []
    for r in rows:
        if r.get("phase") != "direct" or r.get("k") != k or str(r["qid"]) not in hits:
            continue
        qid, name = str(r["qid"]), str(r["strategy"])
        # A run extended with more questions re-measures the profile; rows placed by an earlier profile
        # are superseded by rows placed with the current one.
        if (
            "order" in r
            and name in STRATEGIES
            and list(r["order"]) != _orders(name, k, qid, folds.get(qid, 0), profiles)
        ):
            continue
        predicted = hits[str(r["qid"])][int(r["slot"])]
        by[str(r["strategy"])].append((bool(r["hit"]), predicted))
        if not r.get("same_prompt_as"):
            distinct.append((bool(r["hit"]), predicted))
    out = {}
    for name in [s for s in STRATEGIES if s in by] + sorted(set(by) - set(STRATEGIES)):
        pairs = by[name]
        out[name] = {
            "direct": Cell(sum(d for d, _ in pairs), len(pairs)).to_dict(),
            "derived": Cell(sum(p for _, p in pairs), len(pairs)).to_dict(),
            "agree": round(sum(d == p for d, p in pairs) / len(pairs), 4),
            "n": len(pairs),
        }
    if distinct:
        # Only prompts that differ from the slot run's (``none`` and, for even k, ``langchain`` repeat
        # prompts already answered): the derivation is tested where it could fail.
        pairs = distinct
        out["all reordered"] = {
            "direct": Cell(sum(d for d, _ in pairs), len(pairs)).to_dict(),
            "derived": Cell(sum(p for _, p in pairs), len(pairs)).to_dict(),
            "agree": round(sum(d == p for d, p in pairs) / len(pairs), 4),
            "n": len(pairs),
        }
    return out


def _phase_cell(rows: Rows, phase: str, qids: set[str]) -> Cell:
    hits = [bool(r["hit"]) for r in rows if r.get("phase") == phase and str(r["qid"]) in qids]
    return Cell(sum(hits), len(hits))


def _headline(
    rows: Rows, k: int, derived: Mapping[str, Sequence[Cell]], slots: Sequence[Cell], dist: str, names: Sequence[str]
) -> dict[str, dict[str, object]]:
    table: dict[str, dict[str, object]] = {n: dict(v) for n, v in gap_recovered(derived, slots, dist).items()}
    for name, (lo, hi) in gain_intervals(rows, k, dist, names).items():
        if name in table:
            table[name] = {**table[name], "gain_ci": [lo, hi]}
    return table


def summarize(rows: Rows, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Everything the report and the README quote, as JSON-ready data, per ``k``."""
    settings = settings or {}
    strategies = tuple((settings.get("config") or {}).get("strategies") or STRATEGIES)
    ks = sorted({int(r["k"]) for r in rows if r.get("phase") == "slot"})
    by_k: dict[str, object] = {}
    for k in ks:
        hits = slot_hits(rows, k)
        qids = set(hits)
        slots = slot_cells(rows, k)
        derived = derived_cells(rows, k, strategies)
        profiles = fold_profiles(rows, k)
        by_k[str(k)] = {
            "questions": len(qids),
            "folds": {str(f): p.metadata.get("questions") for f, p in profiles.items()},
            "slot_accuracy": [c.to_dict() for c in slots],
            "derived": {name: [c.to_dict() for c in cells] for name, cells in derived.items()},
            "headline": {d: _headline(rows, k, derived, slots, d, strategies) for d in RANK_DISTRIBUTIONS},
            "rank_distributions": RANK_DISTRIBUTIONS,
            "dead_zone": dead_zone_test(slots) if qids else None,
            "direct_check": direct_check(rows, k),
            "ablation": {
                arm: {str(s): c.to_dict() for s, c in v.items()} for arm, v in ablation_cells(rows, k).items()
            },
            "ablation_vs_plain": ablation_vs_plain(rows, k),
            "ablation_vs_default": ablation_vs_plain(rows, k, base="default"),
            "closed_book": _phase_cell(rows, "closed", qids).to_dict(),
            "oracle": _phase_cell(rows, "oracle", qids).to_dict(),
            "profiles": {str(f): [round(w, 4) for w in p.slot_weights(k)] for f, p in profiles.items()},
        }
    # The summary is the JSON document bench-summary.json holds: callers read into it by key.
    model, command = settings.get("model"), settings.get("command")
    return {"model": model, "command": command, "by_k": by_k, "calls": call_totals(rows)}


def call_totals(rows: Rows) -> dict[str, object]:
    """Rows, model calls, model seconds and prompt tokens evaluated (prefill after the KV cache) of a run."""
    prefill = sum(int(r.get("input_tokens") or 0) - int(r.get("cached_tokens") or 0) for r in rows)
    return {
        "rows": len(rows),
        "answered": sum(1 for r in rows if "same_prompt_as" not in r),
        "model_seconds": round(sum(float(r.get("latency_s") or 0) for r in rows if "same_prompt_as" not in r), 1),
        "prompt_tokens_evaluated": prefill,
        "modes": sorted({str(r.get("mode")) for r in rows}),
    }
