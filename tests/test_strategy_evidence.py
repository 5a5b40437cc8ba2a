"""The default strategy's evidence: docs/strategy-evidence.md is current, and no committed run contradicts it."""

from __future__ import annotations

import json
from pathlib import Path

from litm.placement._auto import FALLBACK_STRATEGY
from litm.placement._registry import DEFAULT_STRATEGY, get_strategy
from litm.placement._strategies import Edges
from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent


EVIDENCE = load_script("scripts/strategy_evidence.py")


def test_the_committed_page_is_generated_from_the_committed_runs() -> None:
    page = (ROOT / "docs" / "strategy-evidence.md").read_text(encoding="utf-8")
    assert page == EVIDENCE.render(), "docs/strategy-evidence.md is stale: run python scripts/strategy_evidence.py"


def test_no_committed_run_puts_the_default_significantly_below_rank_order() -> None:
    gains = EVIDENCE.gains()
    runs = {p.parent.name for p in (ROOT / "docs" / "results").glob("*/bench-summary.json")}
    # Every committed bench summary compares edges with rank order on some metric: the check reads them all.
    assert runs and {g.run for g in gains if g.strategy == "edges"} <= runs
    for path in (ROOT / "docs" / "results").glob("*/bench-summary.json"):
        raw = list(EVIDENCE._run_gains(path.parent.name, json.loads(path.read_text(encoding="utf-8"))))
        assert any(g.strategy == "edges" for g in raw), path  # a copied run's cells are counted once, not lost
    assert FALLBACK_STRATEGY == "edges" and set(EVIDENCE.DEFAULT_ARMS) == {"edges", "profile"}
    below = [g for g in gains if g.strategy in EVIDENCE.DEFAULT_ARMS and g.verdict == "below"]
    assert not below, f"a committed run puts the default below rank order: {below}"


def test_the_default_is_the_fallback_the_evidence_covers() -> None:
    # Without a measured profile auto is exactly the order the table calls edges, for every n.
    for n in range(0, 30):
        assert get_strategy(DEFAULT_STRATEGY).arrange(n) == Edges().arrange(n)


def _summary(edges_ci: list[float], *, likelihood: bool = False) -> dict[str, object]:
    cell = {"gain_over_none": sum(edges_ci) / 2, "gain_ci": edges_ci}
    block: dict[str, object] = {
        "questions": 50,
        "headline": {"decaying": {"none": {"gain_over_none": 0.0, "gain_ci": [0.0, 0.0]}, "edges": cell}},
    }
    if likelihood:
        block["likelihood"] = {"strategies": {"decaying": {"none": {"expected": -1.0}, "edges": cell}}}
    return {"model": {"name": "m"}, "command": "litm bench --data 2wiki --k 5", "by_k": {"5": block}}


def test_a_run_with_edges_below_rank_order_is_caught(tmp_path: Path) -> None:
    for name, ci in (("fine", [-0.01, 0.02]), ("bad", [-0.05, -0.01])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "bench-summary.json").write_text(json.dumps(_summary(ci, likelihood=True)))
    gains = EVIDENCE.gains(tmp_path)
    assert [(g.run, g.metric, g.data, g.k, g.verdict) for g in gains] == [
        ("bad", "hits", "2wiki", 5, "below"),
        ("bad", "likelihood", "2wiki", 5, "below"),
        ("fine", "hits", "2wiki", 5, "null"),
        ("fine", "likelihood", "2wiki", 5, "null"),
    ]
    page = EVIDENCE.render(tmp_path)
    assert "-0.030 [-0.050, -0.010] **below**" in page
    assert "`edges` is below rank order in 2 of 4 cells" in page


def test_gold_set_runs_are_read_by_metric(tmp_path: Path) -> None:
    (tmp_path / "g").mkdir()
    vs_none = {"edges": {m: {"diff": 0.05, "lo": 0.01, "hi": 0.09} for m in ("em", "f1", "hit", "likelihood")}}
    summary = {
        "model": {"name": "m"},
        "command": "litm bench --data hotpotqa",
        "by_k": {},
        "gold_sets": {"by_k": {"10": {"questions": 9, "strategies": {"questions": 9, "vs_none": vs_none}}}},
    }
    (tmp_path / "g" / "bench-summary.json").write_text(json.dumps(summary))
    gains = EVIDENCE.gains(tmp_path)
    assert [(g.metric, g.data, g.questions, g.verdict) for g in gains] == [
        (m, "hotpotqa", 9, "above") for m in ("em", "f1", "hit", "likelihood")
    ]
