"""The likelihood metric of the strategy benchmark: how probable the model finds the gold answer, by slot.

Each prompt is also scored by the teacher-forced log-probability of every accepted answer (see
:mod:`litm.models._logprobs`); a row's ``likelihood`` is the mean per-token log-probability of its likeliest
accepted answer. It is continuous, so a position effect shows with far fewer questions than first-line
accuracy needs, but it measures something different: how strongly the model is pulled towards the right
answer, not whether it writes it. A position where the likelihood drops is one where the model would need
a larger push to answer right; accuracy then moves only where that pull crosses the decision threshold.

* **Slot likelihood**: the mean over questions with the gold passage in each final slot, with a normal 95%
  interval.
* **Middle vs edges**, paired: per question, the mean over the middle slots (the central half, 3-8 of 10)
  minus the value at the last slot (and at the first), with a 95% interval of the mean difference, how many
  questions are lower in the middle, and an exact two-sided sign test.
* **Strategies**: the expected likelihood under a gold rank distribution, derived from the slot runs as for
  accuracy, and its paired bootstrap gain over rank order.

Example:
    >>> rows = [{"phase": "slot", "k": 3, "qid": q, "slot": s, "likelihood": -1.0 - (s == 2)}
    ...         for q in (1, 2) for s in (1, 2, 3)]
    >>> [x["mean"] for x in slot_likelihood(rows, 3)]
    [-1.0, -2.0, -1.0]
"""

from __future__ import annotations

from collections.abc import Sequence

from litm.bench._analysis import (
    RANK_DISTRIBUTIONS,
    expected_gains,
    middle_slots,
    question_orders,
    rank_weights,
    slot_values,
)
from litm.bench._design import STRATEGIES
from litm.bench._rows import Rows
from litm.eval._stats import bootstrap_mean_ci, mcnemar_exact, mean_ci, round_p

__all__ = ["likelihood_summary", "middle_vs_edges", "paired_difference", "slot_likelihood", "strategy_likelihood"]

FIELD = "likelihood"


def slot_likelihood(rows: Rows, k: int) -> list[dict[str, float]]:
    """Mean likelihood with the gold passage in each final slot 1..k, over questions with every slot scored."""
    values = slot_values(rows, k, FIELD)
    out = []
    for s in range(1, k + 1):
        column = [v[s] for v in values.values()]
        if not column:
            return []
        mean, lo, hi = mean_ci(column)
        out.append({"slot": s, "mean": mean, "lo": lo, "hi": hi, "n": len(column)})
    return out


def paired_difference(diffs: Sequence[float]) -> dict[str, object]:
    """Per-question differences: their mean with a 95% interval, how many are below / above 0, exact sign test.

    >>> d = paired_difference([-1.0, -0.5, -0.25, 0.25])
    >>> d["lower"], d["higher"], d["p_value"]
    (3, 1, 0.625)
    """
    mean, lo, hi = mean_ci(diffs)
    lower = sum(d < 0 for d in diffs)
    higher = sum(d > 0 for d in diffs)
    return {
        "diff": mean,
        "lo": lo,
        "hi": hi,
        "lower": lower,
        "higher": higher,
        "n": len(diffs),
        "p_value": round_p(mcnemar_exact(lower, higher), 6),
    }


def middle_vs_edges(rows: Rows, k: int) -> dict[str, object] | None:
    """Per question, the middle slots' mean likelihood minus the last slot's and minus the first slot's."""
    values = slot_values(rows, k, FIELD)
    if not values:
        return None
    mid = middle_slots(k)
    middle = {q: sum(v[s] for s in mid) / len(mid) for q, v in values.items()}
    return {
        "middle_slots": mid,
        "vs_last": paired_difference([middle[q] - v[k] for q, v in values.items()]),
        "vs_first": paired_difference([middle[q] - v[1] for q, v in values.items()]),
    }


def strategy_likelihood(
    rows: Rows, k: int, distribution: str, strategies: Sequence[str] = STRATEGIES
) -> dict[str, object]:
    """Per strategy: expected likelihood under ``distribution`` and the paired 95% bootstrap gain over ``none``."""
    values = slot_values(rows, k, FIELD)
    if not values:
        return {}
    w = rank_weights(distribution, k)
    gains = expected_gains(rows, k, distribution, strategies, field=FIELD)
    out: dict[str, object] = {}
    for name, by_q in question_orders(rows, k, strategies).items():
        per_q = [
            sum(p * values[q][order.index(r) + 1] for r, p in enumerate(w, 1))
            for q, order in by_q.items()
            if q in values
        ]
        if not per_q:
            continue
        entry: dict[str, object] = {"expected": round(sum(per_q) / len(per_q), 4), "questions": len(per_q)}
        diffs = gains.get(name) or []
        if name != "none" and diffs:
            entry["gain_over_none"] = round(sum(diffs) / len(diffs), 4) + 0.0
            entry["gain_ci"] = list(bootstrap_mean_ci(diffs))
        out[name] = entry
    return out


def likelihood_summary(rows: Rows, k: int, strategies: Sequence[str] = STRATEGIES) -> dict[str, object] | None:
    """Everything the report says about the likelihood metric at ``k`` (None when no row was scored)."""
    slots = slot_likelihood(rows, k)
    if not slots:
        return None
    return {
        "questions": slots[0]["n"],
        "slots": slots,
        "middle_vs_edges": middle_vs_edges(rows, k),
        "strategies": {d: strategy_likelihood(rows, k, d, strategies) for d in RANK_DISTRIBUTIONS},
    }
