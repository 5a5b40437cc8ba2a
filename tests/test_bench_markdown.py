"""The Markdown rendering of a benchmark summary: every number traceable to the summary, empty sections omitted."""

from __future__ import annotations

from typing import Any

from litm.bench._analysis import best_fixed, summarize
from litm.bench._markdown import cell, summary_markdown
from litm.bench._outputs import SUMMARY_MD, write_outputs


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


def test_refresh_reanalyses_the_rows_without_a_model(tmp_path: Any) -> None:
    import json

    from typer.testing import CliRunner

    from litm.cli import app

    rows = _rows()
    lines = [json.dumps({"key": f"r{i}", **r}) for i, r in enumerate(rows)]
    lines.insert(3, json.dumps({"key": "r0", **rows[0], "hit": not rows[0]["hit"]}))  # a duplicate key: first wins
    (tmp_path / "bench.jsonl").write_text("\n".join(lines) + '\n{"key": "torn', encoding="utf-8")
    (tmp_path / "run.json").write_text(json.dumps({"model": {"name": "tiny", "spec": "local"}}), encoding="utf-8")
    res = CliRunner().invoke(app, ["report", str(tmp_path), "--refresh"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "bench-summary.json").read_text(encoding="utf-8"))
    assert summary["by_k"]["4"]["questions"] == 8 and summary["by_k"]["4"]["slot_accuracy"][3]["hits"] == 8
    assert (tmp_path / "bench-summary.md").read_text(encoding="utf-8").startswith("# Strategy benchmark: tiny")
    assert (tmp_path / "report.html").exists()
    assert (tmp_path / "bench.jsonl").read_text(encoding="utf-8").endswith('{"key": "torn')  # read, not repaired


def test_refresh_without_rows_is_a_clear_error(tmp_path: Any) -> None:
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "litm", "report", str(tmp_path), "--refresh"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "no benchmark rows (bench.jsonl)" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
