"""The Markdown rendering of a benchmark summary: every number traceable to the summary, empty sections omitted."""

from __future__ import annotations

from typing import Any

from litm.bench.analysis import summarize
from litm.bench.markdown import best_fixed, cell, summary_markdown
from litm.bench.outputs import SUMMARY_MD, write_outputs


def _rows() -> list[dict[str, Any]]:
    # Recency only: the last of 4 slots answers every question, slot 1 half of them, the middle none.
    rows: list[dict[str, Any]] = [
        {"phase": "slot", "k": 4, "qid": q, "fold": q % 2, "slot": s, "hit": s == 4 or (s == 1 and q % 2 == 0)}
        for q in range(1, 9)
        for s in range(1, 5)
    ]
    rows += [{"phase": "closed", "qid": q, "hit": q == 1} for q in range(1, 9)]
    rows += [{"phase": "oracle", "qid": q, "hit": True} for q in range(1, 9)]
    return rows


def _section(text: str, start: str) -> str:
    return text.split(start, 1)[1].split("\n\n", 2)[1]


def test_markdown_carries_the_summary_numbers() -> None:
    summary = summarize(_rows(), {"model": {"name": "tiny", "spec": "local"}, "command": "litm bench --k 4"})
    text = summary_markdown(summary)
    assert text.startswith("# Strategy benchmark: tiny (local)\n") and "litm bench --k 4" in text
    assert "## k = 4: 8 evaluation questions" in text
    slots = _section(text, "Accuracy with the gold passage").splitlines()[2:]
    assert slots == [
        "| 1 | 4/8 | " + cell(summary["by_k"]["4"]["slot_accuracy"][0]) + " |",
        "| 2 | 0/8 | 0.00 [0.00, 0.32] |",
        "| 3 | 0/8 | 0.00 [0.00, 0.32] |",
        "| 4 | 8/8 | 1.00 [0.68, 1.00] |",
    ]
    assert "oracle (gold passage alone) 8/8 = 1.00 [0.68, 1.00]; closed book 1/8 = 0.12" in text
    # Pyramid sends rank 1 to the last slot, which always answers: it is the best fixed strategy here.
    assert "best fixed strategy `pyramid`" in text and "| **`pyramid`** |" in text
    assert "every strategy ties" in text  # the uniform rank distribution
    # No direct run and no ablation rows: those sections are left out, not shown empty.
    assert "Direct check" not in text and "Anchor ablation" not in text


def test_best_fixed_ignores_profile_random_and_ties() -> None:
    def table(**acc: float) -> dict[str, dict[str, float]]:
        return {name: {"expected_acc": a} for name, a in acc.items()}

    assert best_fixed(table(none=0.1, edges=0.2, pyramid=0.3, profile=0.9, random=0.5)) == "pyramid"
    assert best_fixed(table(none=0.1, edges=0.3, langchain=0.3)) == "edges"  # first listed wins a tie
    assert best_fixed(table(none=0.2, edges=0.2, pyramid=0.2)) is None
    assert best_fixed(table(none=0.2, profile=0.4)) is None


def test_write_outputs_writes_the_markdown(tmp_path: Any) -> None:
    out = write_outputs(tmp_path, _rows(), {"model": {"name": "tiny"}}, plots=False)
    text = (tmp_path / SUMMARY_MD).read_text(encoding="utf-8")
    assert text == summary_markdown(out.summary)
