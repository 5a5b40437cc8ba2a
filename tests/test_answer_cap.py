"""docs/results/answer-cap is current: the share of every committed run's replies that the answer cap cut off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent
CAP = load_script("scripts/answer_cap.py")


def test_the_committed_table_is_generated_from_the_committed_runs() -> None:
    page = CAP.PAGE.read_text(encoding="utf-8")
    assert page == CAP.page(page), "docs/results/answer-cap/README.md is stale: run python scripts/answer_cap.py"
    runs = sorted(p.parent.name for p in (ROOT / "docs" / "results").glob("*/bench.jsonl"))
    assert runs and all(f"[{name}](../{name}/README.md)" in page for name in runs)


def test_a_run_is_counted_by_its_cut_off_misses_and_the_quote_arm_is_left_out(tmp_path: Path) -> None:
    run = tmp_path / "bench-x"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"identity": {"model": "local:m", "max_tokens": 16}}))
    rows = [
        {"arm": "plain", "finish_reason": "length", "hit": False},
        {"arm": "plain", "finish_reason": "length", "hit": True},
        {"arm": "plain", "finish_reason": "stop", "hit": False},
        {"arm": "plain", "finish_reason": "stop", "hit": True},
        {"arm": "quote-first", "finish_reason": "length", "hit": False},
    ]
    (run / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert "| [bench-x](../bench-x/README.md) | `local:m` | 16 | 4 | 0.50 | 0.25 |" in CAP.table(tmp_path)


def _run(folder: Path, cap: int, rows: list[dict[str, object]]) -> None:
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"identity": {"model": "local:m", "max_tokens": cap}}))
    (folder / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_rerun_at_a_higher_cap_is_paired_prompt_by_prompt_and_a_changed_prompt_is_refused(tmp_path: Path) -> None:
    def row(q: int, hit: bool, sha: str = "") -> dict[str, object]:
        return {"key": f"slot|k=20|q={q}|s=1", "phase": "slot", "slot": 1, "hit": hit, "prompt_sha": sha or f"p{q}"}

    _run(tmp_path / "old", 16, [row(1, False), row(2, False), row(3, True), row(4, False)])
    _run(tmp_path / "new", 64, [row(1, True), row(2, False), row(3, True)])  # q=4 not rerun yet: left out
    table = CAP.paired("new", ("old",), tmp_path)
    assert "| original, slot 1 | 3 | 0.33 | 0.67 | +0.33 [" in table and "| 1 / 0 |" in table
    _run(tmp_path / "changed", 64, [row(1, True, sha="other")])
    with pytest.raises(SystemExit, match="not the prompt"):
        CAP.paired("changed", ("old",), tmp_path)
