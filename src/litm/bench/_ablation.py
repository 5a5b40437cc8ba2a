"""The anchor ablation of a strategy benchmark: each prompt arm against the plain prompt, same question and slot.

The ablation answers a question's prompt with the gold passage in a few slots once per arm (litm's default
anchors, the bracket style, ...; see :data:`~litm.bench._design.ARMS`); the plain arm is the slot run's own
answer. Only question-slots that have every arm count, so a run stopped mid-question compares like with like.

Example:
    >>> rows = [{"phase": "slot", "k": 3, "qid": q, "slot": 2, "hit": q == 1} for q in (1, 2, 3)]
    >>> rows += [{"phase": "ablation", "k": 3, "qid": q, "slot": 2, "arm": "default", "hit": q != 3}
    ...          for q in (1, 2, 3)]
    >>> ablation_vs_plain(rows, 3)["default"]
    {'pairs': 3, 'better': 1, 'worse': 0, 'p_value': 1.0}
    >>> {arm: cells[2].hits for arm, cells in ablation_cells(rows, 3).items()}
    {'plain': 1, 'default': 2}
"""

from __future__ import annotations

from collections import defaultdict

from litm.bench._rows import Rows
from litm.eval._stats import Cell, mcnemar_exact, round_p

__all__ = ["ablation_cells", "ablation_vs_plain"]



def _ablation_pairs(rows: Rows, k: int) -> dict[tuple[str, int], dict[str, bool]]:
    """``{(qid, slot): {arm: hit}}`` for the prompts that have every arm (plain = the slot run)."""
    arms: dict[tuple[str, int], dict[str, bool]] = defaultdict(dict)
    for r in rows:
        if r.get("phase") == "ablation" and r.get("k") == k:
            arms[(str(r["qid"]), int(r["slot"]))][str(r["arm"])] = bool(r["hit"])
    plain = {
        (str(r["qid"]), int(r["slot"])): bool(r["hit"]) for r in rows if r.get("phase") == "slot" and r.get("k") == k
    }
    # Every arm this run asked for: a question-slot still missing one is left out, not compared on fewer arms.
    every = {a for got in arms.values() for a in got}
    return {key: {"plain": plain[key], **got} for key, got in arms.items() if key in plain and set(got) == every}


def ablation_vs_plain(rows: Rows, k: int) -> dict[str, dict[str, object]]:
    """Each ablation arm against the plain prompt on the same question and slot: discordant pairs, exact McNemar.

    Pairing removes the question-to-question spread that dominates small samples: only prompts where exactly
    one of the two arms answered carry information about the arm.
    """
    pairs = _ablation_pairs(rows, k)
    out: dict[str, dict[str, object]] = {}
    for arm in sorted({a for got in pairs.values() for a in got} - {"plain"}):
        better = sum(got[arm] and not got["plain"] for got in pairs.values())
        worse = sum(got["plain"] and not got[arm] for got in pairs.values())
        out[arm] = {
            "pairs": len(pairs),
            "better": better,
            "worse": worse,
            "p_value": round_p(mcnemar_exact(better, worse)),
        }
    return out


def ablation_cells(rows: Rows, k: int) -> dict[str, dict[int, Cell]]:
    """Accuracy per prompt arm and slot, on the questions that have every arm (plain = the slot run)."""
    out: dict[str, dict[int, Cell]] = defaultdict(dict)
    for (_, slot), got in _ablation_pairs(rows, k).items():
        for arm, hit in got.items():
            c = out[arm].get(slot, Cell(0, 0))
            out[arm][slot] = Cell(c.hits + hit, c.n + 1)
    return {arm: dict(sorted(v.items())) for arm, v in out.items()}
