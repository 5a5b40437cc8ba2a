"""scripts/psc_vote_rules.py: the committed psc run's answers re-voted without the model."""

from __future__ import annotations

import doctest
from pathlib import Path

from litm.bench._consistency import psc_summary
from litm.bench._rows import rows_of
from litm.eval._results import read_rows
from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "docs" / "results" / "bench-qwen05-nq-k20-psc"
RULES = load_script("scripts/psc_vote_rules.py")


def test_its_examples_run() -> None:
    assert doctest.testmod(RULES).failed == 0


def test_the_medoid_credits_answers_that_name_the_same_thing() -> None:
    # Three sentences name Copernicus in different words; exact-match majority would give the tie to call 0.
    answers = ["Ptolemy.", "It was Copernicus.", "Nicolaus Copernicus challenged it.", "Copernicus did."]
    assert RULES.overlap_winner(answers) in (1, 2, 3)
    assert RULES.overlap_winner(["a b", "c d"]) == 0  # no overlap at all: the earliest call


def test_the_table_agrees_with_the_runs_own_summary() -> None:
    # "majority" is the row's own hit and "call 0" the plain answer the summary pairs with: their totals are the
    # summary's psc and plain hits, slot by slot.
    summary = psc_summary(rows_of(read_rows(RUN / "bench.jsonl")))["by_k"]["20"]["m=5"]
    lines = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in RULES.table(RUN).splitlines()[2:]}
    for slot, cell in summary.items():
        row = lines[f"slot {slot.removeprefix('s=')}"]
        n = cell["questions"]
        assert int(row[1]) == n
        assert int(row[2]) == round(cell["plain"]["hit"]["acc"] * n)
        assert int(row[3]) == round(cell["psc"]["hit"]["acc"] * n)
        assert int(row[3]) <= int(row[5].strip(" |")) and int(row[4]) <= int(row[5].strip(" |"))
