"""The anchors' evidence: docs/anchor-evidence.md is current and reads every committed anchor ablation."""

from __future__ import annotations

from pathlib import Path

from litm.prompt import AnchorOptions
from script_support import load_script

ROOT = Path(__file__).resolve().parent.parent


EVIDENCE = load_script("scripts/anchor_evidence.py")


def test_the_committed_page_is_generated_from_the_committed_runs() -> None:
    page = (ROOT / "docs" / "anchor-evidence.md").read_text(encoding="utf-8")
    assert page == EVIDENCE.render(), "docs/anchor-evidence.md is stale: run python scripts/anchor_evidence.py"


def test_the_page_names_the_arm_that_renders_the_shipped_anchors() -> None:
    from litm.bench._design import _ANCHORS

    assert _ANCHORS[EVIDENCE.shipped_arm()] == AnchorOptions()


def test_every_committed_ablation_is_read_and_a_copied_run_counts_once() -> None:
    cells = EVIDENCE.cells()
    runs = {c.run for c in cells}
    # The runs whose anchor arms the README and docs/results.md quote.
    assert {"bench-qwen05-2wiki-k10", "bench-qwen05-nq-k20", "bench-qwen05-hotpotqa-k10"} <= runs
    default_2wiki_em = [c for c in cells if (c.arm, c.data, c.model, c.metric) ==
                        ("default", "2wiki", "qwen2.5-coder-0.5b", "em")]  # fmt: skip
    assert len(default_2wiki_em) == 1 and default_2wiki_em[0].verdict == "below"  # -0.050 [-0.089, -0.011]


def _nq_summary() -> dict[str, object]:
    versus = {"diff": 0.05, "lo": 0.01, "hi": 0.09, "pairs": 100, "likelihood": [-0.2, -0.3, -0.1]}
    return {
        "model": {"name": "m"},
        "command": "litm bench --k 20",
        "by_k": {"20": {
            "ablation": {"plain": {"10": {}}, "default": {"10": {}}, "minimal": {"1": {}, "10": {}}},
            "ablation_vs_plain": {"default": {"pairs": 100, "better": 1, "worse": 2, "p_value": 1.0}},
            "ablation_vs_default": {"minimal": versus},
        }},
    }  # fmt: skip


def test_nq_cells_take_each_arms_slots_and_skip_a_summary_without_intervals() -> None:
    cells = list(EVIDENCE._run_cells("r", _nq_summary()))
    # A summary written before intervals existed has none for "default": only the element cells are read.
    assert [(c.arm, c.base, c.metric, c.verdict, c.where) for c in cells] == [
        ("minimal", "default", "hits", "above", "slot 1, 10"),
        ("minimal", "default", "likelihood", "below", "slot 1, 10"),
    ]


def test_the_shipped_id_and_title_format_is_below_plain_on_one_model_only() -> None:
    # Why the default is by model (issue 41; tests/test_anchor_rule.py checks the default itself): litm's id and
    # title are below plain by likelihood on Qwen 0.5B NQ k = 20 (-0.070 [-0.117, -0.024], 200 questions) and
    # above it on the embedded Gemma 270M.
    shipped = EVIDENCE.shipped_arm()
    verdicts = {(c.model, c.verdict) for c in EVIDENCE.cells() if c.arm == shipped and c.base == "plain"}
    assert ("qwen2.5-coder-0.5b", "below") in verdicts and ("gemma3-270m", "above") in verdicts
    assert ("gemma3-270m", "below") not in verdicts


def test_a_copy_still_running_never_counts_an_arm_twice(tmp_path: Path) -> None:
    import json

    def write(run: str, pairs: int, diff: float) -> None:
        summary = _nq_summary()
        block = summary["by_k"]["20"]  # type: ignore[index]
        block["ablation_vs_plain"] = {"default": {"pairs": pairs, "diff": diff, "lo": diff - 0.1, "hi": diff + 0.1}}
        (tmp_path / run).mkdir()
        (tmp_path / run / "bench-summary.json").write_text(json.dumps(summary), encoding="utf-8")

    write("orig", 100, -0.03)
    write("orig-copy", 85, -0.024)  # the copy's partial re-analysis of the original's arm
    default = [c for c in EVIDENCE.cells(tmp_path) if (c.arm, c.base, c.metric) == ("default", "plain", "hits")]
    assert [(c.run, c.pairs) for c in default] == [("orig", 100)]


def test_an_ablation_only_run_grown_by_questions_replaces_the_smaller_cell(tmp_path: Path) -> None:
    import json

    from litm.bench._ablation_summary import ablation_summary

    def rows(questions: int, worse: int) -> list[dict[str, object]]:
        # minimal misses `worse` questions plain answers, and is 0.1 nats less likely on each question.
        out: list[dict[str, object]] = []
        for q in range(questions):
            out.append({"phase": "slot", "k": 20, "qid": q, "slot": 10, "hit": True, "likelihood": -1.0})
            out.append({"phase": "ablation", "k": 20, "qid": q, "slot": 10, "arm": "minimal", "hit": q >= worse,
                        "likelihood": -1.1 - 0.01 * (q % 3)})  # fmt: skip
        return out

    (tmp_path / "full").mkdir()
    full = {**ablation_summary(rows(10, 0)), "model": {"name": "m"}, "command": "litm bench --k 20"}
    (tmp_path / "full" / "bench-summary.json").write_text(json.dumps(full), encoding="utf-8")
    (tmp_path / "grown").mkdir()
    grown = {**ablation_summary(rows(30, 3)), "model": {"name": "m"}, "command": "litm bench --k 20 --ablation-only"}
    (tmp_path / "grown" / "ablation-summary.json").write_text(json.dumps(grown), encoding="utf-8")
    cells = [c for c in EVIDENCE.cells(tmp_path) if c.arm == "minimal" and c.base == "plain"]
    assert {(c.run, c.metric, c.pairs, c.where) for c in cells} == {
        ("grown", "hits", 30, "slot 10"), ("grown", "likelihood", 30, "slot 10")}  # fmt: skip
    assert next(c for c in cells if c.metric == "hits").diff == -0.1
