"""The benchmark's likelihood metric: rows, the slot table, the paired middle test, strategies, the report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from litm.bench._data import load_items
from litm.bench._likelihood import (
    likelihood_summary,
    middle_vs_edges,
    paired_difference,
    slot_likelihood,
    strategy_likelihood,
)
from litm.bench._markdown import likelihood_markdown
from litm.bench._outputs import write_outputs
from litm.bench._runner import BenchConfig, BenchError, continuations, run_bench
from litm.models._base import PromptLike
from litm.models._logprobs import Logprobs
from test_bench_runner import EdgeModel, _config

pytest.importorskip("bm25s")


class ScoringEdgeModel(EdgeModel):
    """EdgeModel that also scores answers: -1 per token with the answer's document at an edge, else -3."""

    def continuation_logprobs(self, prompt: PromptLike, conts: Sequence[str]) -> list[Logprobs]:
        assert isinstance(prompt, str) and all(c.startswith(" ") for c in conts)
        edge = self.reply(prompt) != " I do not know"
        return [Logprobs(c, tuple(c.split()), (-1.0 if edge else -3.0,) * len(c.split()), 10) for c in conts]


@pytest.fixture(scope="module")
def answers() -> dict[str, str]:
    return {it.question: it.answers[0] for it in load_items(6, k=4)}


def test_rows_carry_every_answer_and_the_summary_reads_the_slot_shape(tmp_path: Path, answers: dict[str, str]) -> None:
    run = run_bench(ScoringEdgeModel(answers), _config(), tmp_path, progress=False)
    assert run.settings["identity"]["likelihood"] is True
    slot = [r for r in run.rows if r["phase"] == "slot"]
    assert all(len(r["answer_logprobs"]) == len(r["answers"]) for r in slot)
    assert {r["likelihood"] for r in slot} == {-1.0, -3.0}
    lk = likelihood_summary(run.rows, 4)
    assert lk is not None and lk["questions"] == 6
    assert [c["mean"] for c in lk["slots"]] == [-1.0, -3.0, -3.0, -1.0]
    test = lk["middle_vs_edges"]
    assert test["middle_slots"] == [2, 3] and test["vs_last"]["diff"] == -2.0
    assert test["vs_last"]["lower"] == 6 and test["vs_last"]["p_value"] == pytest.approx(2 / 2**6)
    # pyramid puts ranks 1 and 2 at the edges: a higher expected likelihood than rank order under p(r) ~ 1/r.
    table = lk["strategies"]["decaying"]
    assert table["pyramid"]["expected"] > table["none"]["expected"] and table["pyramid"]["gain_ci"][0] > 0
    assert set(lk["strategies"]["uniform"]["pyramid"]["gain_ci"]) == {0.0}  # a permutation of slots
    text = "\n".join(likelihood_markdown(lk))
    assert "| 1 | -1.000 [-1.000, -1.000] |" in text and "lower in the middle for 6 of 6" in text
    out = write_outputs(tmp_path, run.rows, run.settings, plots=False)
    assert out.summary["by_k"]["4"]["likelihood"]["slots"][1]["mean"] == -3.0
    assert "Likelihood of the gold answer" in out.summary_path.with_suffix(".md").read_text()


def test_a_model_without_logprobs_runs_without_the_metric_unless_asked(tmp_path: Path, answers: dict[str, str]) -> None:
    run = run_bench(EdgeModel(answers), _config(questions=2, direct_questions=0), tmp_path / "a", progress=False)
    assert not any("likelihood" in r for r in run.rows) and likelihood_summary(run.rows, 4) is None
    with pytest.raises(BenchError, match="cannot score answer log-probabilities"):
        run_bench(EdgeModel(answers), _config(likelihood="on"), tmp_path / "b", progress=False)
    with pytest.raises(BenchError, match="likelihood must be"):
        BenchConfig(likelihood="yes")
    # A run made without the metric is not resumed with it (its rows would be half scored).
    with pytest.raises(BenchError, match="different settings"):
        run_bench(ScoringEdgeModel(answers), _config(questions=2, direct_questions=0), tmp_path / "a", resume=True)


def test_continuations_follow_the_prompt_format() -> None:
    assert continuations(["Paris", "paris, France"], chat=False) == [" Paris", " paris, France"]
    assert continuations(["Paris"], chat=True) == ["Paris"]


def _rows(values: dict[str, list[float]]) -> list[dict[str, Any]]:
    return [
        {"phase": "slot", "k": len(v), "qid": q, "fold": i % 2, "slot": s, "hit": False, "likelihood": x}
        for i, (q, v) in enumerate(values.items())
        for s, x in enumerate(v, start=1)
    ]


def test_paired_middle_test_by_hand() -> None:
    # Three questions at k = 4 (middle slots 2-3); per question middle mean minus last: -1.5, -0.5, +1.
    rows = _rows({"a": [-1.0, -2.0, -3.0, -1.0], "b": [-2.0, -2.0, -2.0, -1.5], "c": [0.0, -1.0, -1.0, -2.0]})
    mve = middle_vs_edges(rows, 4)
    assert mve is not None
    last = mve["vs_last"]
    assert last["diff"] == pytest.approx(-1 / 3, abs=1e-4) and (last["lower"], last["higher"]) == (2, 1)
    sd = ((-1.5 + 1 / 3) ** 2 + (-0.5 + 1 / 3) ** 2 + (1 + 1 / 3) ** 2) ** 0.5 / 2**0.5
    assert last["hi"] - last["diff"] == pytest.approx(1.959964 * sd / 3**0.5, abs=1e-3)
    assert last["p_value"] == 1.0
    assert [c["n"] for c in slot_likelihood(rows, 4)] == [3, 3, 3, 3]
    # A question missing one slot's likelihood is left out everywhere.
    partial = [r for r in rows if not (r["qid"] == "c" and r["slot"] == 2)]
    assert slot_likelihood(partial, 4)[0]["n"] == 2
    assert strategy_likelihood(partial, 4, "decaying", ("none", "edges"))["edges"]["questions"] == 2


def test_a_strong_paired_result_keeps_its_p_value() -> None:
    # 54 of 65 questions lower (the k = 20 run's count): p = 6.0e-8, which six fixed decimals printed as "p = 0".
    d = paired_difference([-1.0] * 54 + [1.0] * 11)
    assert d["p_value"] == pytest.approx(6.03e-8, rel=1e-2)
    text = "\n".join(
        likelihood_markdown(
            {"questions": 65, "slots": [], "middle_vs_edges": {"middle_slots": [2, 3], "vs_last": d, "vs_first": d}}
        )
    )
    assert "54 of 65 questions (sign test p = 6e-08)" in text
