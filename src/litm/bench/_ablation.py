"""The anchor ablation of a strategy benchmark: each prompt arm against the plain prompt, same question and slot.

The ablation answers a question's prompt with the gold passage in a few slots once per arm (litm's default
anchors, the bracket style, ...; see :data:`~litm.bench._design.ARMS`); the plain arm is the slot run's own
answer. At each slot, only question-slots that have every arm run at that slot count, so a run stopped
mid-question compares like with like, and an arm added later at more slots (on top of a copied run) is still
compared wherever it ran.

Example:
    >>> rows = [{"phase": "slot", "k": 3, "qid": q, "slot": 2, "hit": q == 1} for q in (1, 2, 3)]
    >>> rows += [{"phase": "ablation", "k": 3, "qid": q, "slot": 2, "arm": "default", "hit": q != 3}
    ...          for q in (1, 2, 3)]
    >>> ablation_vs_plain(rows, 3)["default"]
    {'pairs': 3, 'better': 1, 'worse': 0, 'p_value': 1.0, 'diff': 0.3333, 'lo': 0.0, 'hi': 1.0}
    >>> {arm: cells[2].hits for arm, cells in ablation_cells(rows, 3).items()}
    {'plain': 1, 'default': 2}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from litm.bench._design import ANCHOR_ELEMENT_ARMS
from litm.bench._rows import Rows
from litm.eval._stats import Cell, bootstrap_mean_ci, mcnemar_exact, mean_ci, round_p

__all__ = ["ablation_cells", "ablation_vs_plain"]


def _ablation_rows(rows: Rows, k: int) -> dict[tuple[str, int], dict[str, Mapping[str, Any]]]:
    """``{(qid, slot): {arm: row}}`` for the prompts that have every arm run at their slot (plain = the slot run)."""
    arms: dict[tuple[str, int], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r.get("phase") == "ablation" and r.get("k") == k:
            arms[(str(r["qid"]), int(r["slot"]))][str(r["arm"])] = r
    plain = {(str(r["qid"]), int(r["slot"])): r for r in rows if r.get("phase") == "slot" and r.get("k") == k}
    # Every arm run at the slot: a question-slot still missing one is left out, not compared on fewer arms.
    every: dict[int, set[str]] = defaultdict(set)
    for (_, slot), got in arms.items():
        every[slot] |= set(got)
    return {
        key: {"plain": plain[key], **got}
        for key, got in arms.items()
        if key in plain and set(got) == every[key[1]]
    }


def _ablation_pairs(rows: Rows, k: int) -> dict[tuple[str, int], dict[str, bool]]:
    """``{(qid, slot): {arm: hit}}`` for the prompts that have every arm run at their slot."""
    return {key: {arm: bool(r["hit"]) for arm, r in got.items()} for key, got in _ablation_rows(rows, k).items()}


def ablation_vs_plain(rows: Rows, k: int, base: str = "plain") -> dict[str, dict[str, object]]:
    """Each ablation arm against the plain prompt on the same question and slot: discordant pairs, exact McNemar.

    ``base`` names another arm to compare with instead (``"default"``: the anchor-element arms against the full
    default anchors); the arms compared are then the anchor-element arms run beside it.

    Pairing removes the question-to-question spread that dominates small samples: only prompts where exactly
    one of the two arms answered carry information about the arm. ``diff`` is the arm's accuracy minus plain's
    on its pairs, with a paired bootstrap 95% interval (``lo``, ``hi``). Where every pair has the gold
    answer's likelihood (mean log-probability per token), ``likelihood`` is the arm's minus plain's, with its
    95% interval.
    """
    pairs = _ablation_rows(rows, k)
    arms = sorted({a for got in pairs.values() for a in got} - {base})
    if base != "plain":
        arms = [a for a in arms if a in ANCHOR_ELEMENT_ARMS]
    out: dict[str, dict[str, object]] = {}
    for arm in arms:
        mine = [(bool(got[arm]["hit"]), bool(got[base]["hit"])) for got in pairs.values() if arm in got and base in got]
        if not mine:
            continue
        better = sum(a and not p for a, p in mine)
        worse = sum(p and not a for a, p in mine)
        lo, hi = bootstrap_mean_ci([float(a) - float(p) for a, p in mine])
        out[arm] = {
            "pairs": len(mine),
            "better": better,
            "worse": worse,
            "p_value": round_p(mcnemar_exact(better, worse)),
            "diff": round((better - worse) / len(mine), 4),
            "lo": lo,
            "hi": hi,
        }
        scored = [(got[arm].get("likelihood"), got[base].get("likelihood"))
                  for got in pairs.values() if arm in got and base in got]  # fmt: skip
        if all(a is not None and p is not None for a, p in scored):
            out[arm]["likelihood"] = list(mean_ci([float(a) - float(p) for a, p in scored]))  # type: ignore[arg-type]
    return out


def ablation_cells(rows: Rows, k: int) -> dict[str, dict[int, Cell]]:
    """Accuracy per prompt arm and slot, on the questions that have every arm (plain = the slot run)."""
    out: dict[str, dict[int, Cell]] = defaultdict(dict)
    for (_, slot), got in _ablation_pairs(rows, k).items():
        for arm, hit in got.items():
            c = out[arm].get(slot, Cell(0, 0))
            out[arm][slot] = Cell(c.hits + hit, c.n + 1)
    return {arm: dict(sorted(v.items())) for arm, v in out.items()}
