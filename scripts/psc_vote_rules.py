"""How far the psc vote is from what its calls knew: re-score a committed psc run's answers under other vote rules.

Every ``psc`` row keeps each call's answer (``call_answers``), so the vote can be re-run without the model. Per
slot (or design), the share of prompts where the chosen answer is right (first-line match, as every row is
scored), for:

* ``call 0``: the plain prompt's own answer (call 0 is the plain prompt byte for byte);
* ``majority``: litm's vote, the normalised majority, a tie to the earliest call (the row's own ``hit``);
* ``overlap``: the answer with the highest summed token F1 against the other calls' answers (the medoid; a
  tie to the earliest call), a vote that credits near-matches, such as two sentences that name the same person;
* ``any order``: some call's answer is right (the ceiling of every vote over these calls).

The question this answers: the last NQ note found one of five orders right about twice as often as the vote,
and asked whether a vote by overlap instead of exact equality would reach more of that ceiling.

Usage:
    python scripts/psc_vote_rules.py docs/results/bench-qwen05-nq-k20-psc
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from litm.bench._rows import BenchRow, rows_of
from litm.eval._results import read_rows
from litm.eval._scoring import score_output, token_f1

RULES = ("call 0", "majority", "overlap", "any order")


def overlap_winner(answers: Sequence[str]) -> int:
    """The index of the answer with the highest summed token F1 against the others (the earliest on a tie).

    >>> overlap_winner(["Paris", "It is Lyon", "The capital is Lyon", "Lyon"])
    1
    """
    lines = [a.strip().split("\n", 1)[0] for a in answers]
    score = [sum(token_f1(a, [b]) for j, b in enumerate(lines) if j != i) for i, a in enumerate(lines)]
    return max(range(len(lines)), key=lambda i: (score[i], -i))


def rule_hits(row: BenchRow) -> dict[str, bool]:
    """Whether each rule's chosen answer is right for one psc row."""
    answers = [str(a) for a in row.get("call_answers", [])]  # type: ignore[attr-defined]
    accepted, question = list(row.get("answers", [])), str(row.get("question", ""))
    hits = [score_output(a, answers=accepted, question=question).hit for a in answers]
    return {"call 0": hits[0], "majority": bool(row.get("hit")), "overlap": hits[overlap_winner(answers)],
            "any order": any(hits)}  # fmt: skip


def table(run: Path) -> str:
    """The Markdown table for the psc rows of ``run``: hits per rule, per slot (or design) and over all."""
    by: dict[str, list[dict[str, bool]]] = defaultdict(list)
    for r in rows_of(read_rows(run / "bench.jsonl")):
        if r.get("phase") == "psc" and r.get("call_answers"):  # type: ignore[typeddict-item]
            label = f"design {r['design']}" if r.get("gold_set") else f"slot {r['slot']}"
            by[label].append(rule_hits(r))
    lines = ["| where | prompts | " + " | ".join(RULES) + " |", "|---|---:|" + "---:|" * len(RULES)]
    every = [h for got in by.values() for h in got]
    for label, got in [*sorted(by.items(), key=lambda kv: (len(kv[0]), kv[0])), ("all", every)]:
        lines.append(f"| {label} | {len(got)} | " + " | ".join(str(sum(h[r] for h in got)) for r in RULES) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("run", type=Path, help="a psc run folder (its bench.jsonl)")
    args = parser.parse_args(argv)
    print(table(args.run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
