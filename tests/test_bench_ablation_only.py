"""Ablation-only benchmark runs: the arms and the plain prompts they pair with, nothing else.

What a user relies on: the same comparisons as a full run at a fraction of its prompts, rows that pair and
resume with a full run's (so a committed run can be grown by questions without its slot sweep), a summary
that holds only what was measured, and typed errors for settings that cannot mean anything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.bench._ablation_summary import ablation_summary, write_ablation_outputs
from litm.bench._analysis import summarize
from litm.bench._data import load_items
from litm.bench._goldsets import goldset_summary
from litm.bench._runner import BenchConfig, BenchError, run_bench
from litm.cli import app
from litm.eval._results import read_rows
from test_bench_goldsets import TwoEdgesModel, _records
from test_bench_runner import EdgeModel, edge_backend  # noqa: F401  (a fixture the CLI test uses)

pytest.importorskip("bm25s")

K = 6
ARMS = ("minimal", "default", "default-score")


@pytest.fixture(scope="module")
def answers() -> dict[str, str]:
    return {it.question: it.answers[0] for it in load_items(6, k=K)}


def _config(**kw: Any) -> BenchConfig:
    opts: dict[str, Any] = {"questions": 4, "ks": (K,), "direct_questions": 0, "ablation_questions": 4,
                            "ablation_slots": (1, 3), "ablation_arms": ARMS, "max_tokens": 8}  # fmt: skip
    return BenchConfig(**{**opts, **kw})


def test_the_same_comparisons_as_a_full_run_from_a_fraction_of_its_prompts(
    tmp_path: Path, answers: dict[str, str]
) -> None:
    full = run_bench(EdgeModel(answers), _config(), tmp_path / "full", progress=False)
    model = EdgeModel(answers)
    only = run_bench(model, _config(ablation_only=True), tmp_path / "only", progress=False)
    # 4 questions x 2 slots x (plain + 3 arms), and the two controls per question; no other slot, no strategy.
    assert model.calls == only.answered == len(only.rows) == 4 * 2 * 4 + 4 * 2
    assert {r["phase"] for r in only.rows} == {"slot", "ablation", "closed", "oracle"}
    assert {r["slot"] for r in only.rows if r["phase"] == "slot"} == {1, 3}
    # Every row is the full run's prompt under the full run's key.
    shas = {r["key"]: r["prompt_sha"] for r in full.rows}
    assert all(shas[r["key"]] == r["prompt_sha"] for r in only.rows)
    # The model reads only the first and last documents: at slot 3 no arm helps, at slot 1 every arm answers.
    s = ablation_summary(only.rows)["by_k"][str(K)]
    assert s == {key: summarize(full.rows)["by_k"][str(K)][key]
                 for key in ("ablation", "ablation_vs_plain", "ablation_vs_default")} | {"pairs": 8}  # fmt: skip
    assert s["ablation"]["minimal"] == {"1": {"hits": 4, "n": 4, "acc": 1.0, "lo": 0.5101, "hi": 1.0},
                                        "3": {"hits": 0, "n": 4, "acc": 0.0, "lo": 0.0, "hi": 0.4899}}  # fmt: skip
    assert set(s["ablation_vs_default"]) == {"minimal", "default-score"}


def test_it_grows_a_full_run_by_questions_and_resumes(tmp_path: Path, answers: dict[str, str]) -> None:
    base = tmp_path / "run"
    run_bench(EdgeModel(answers), _config(), base, progress=False)
    before = (base / "bench.jsonl").read_text(encoding="utf-8")
    grown = _config(questions=6, ablation_questions=6, ablation_arms=("minimal",), ablation_only=True)
    model = EdgeModel(answers)
    run = run_bench(model, grown, base, resume=True, progress=False)
    # Only the two new questions are asked (2 slots x plain + minimal, 2 controls each); the rest is reused.
    assert model.calls == run.answered == 2 * (2 * 2 + 2)
    assert (base / "bench.jsonl").read_text(encoding="utf-8").startswith(before)
    s = ablation_summary(run.rows)["by_k"][str(K)]
    # The full run's other arms ran on 4 questions: a question missing one is left out, never compared on fewer.
    assert s["ablation_vs_plain"]["minimal"]["pairs"] == 8
    again = EdgeModel(answers)
    assert run_bench(again, grown, base, resume=True, progress=False).answered == 0 and again.calls == 0


def test_multi_gold_questions_run_at_their_ablation_designs(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    config = _config(data=str(path), strategies=("none",), ablation_arms=("default",), ablation_slots=())
    full = run_bench(TwoEdgesModel(_records()), config, tmp_path / "full", progress=False)
    only = run_bench(TwoEdgesModel(_records()), _config(**{**config.__dict__, "ablation_only": True}),
                     tmp_path / "only", progress=False)  # fmt: skip
    assert {(r["phase"], r.get("design")) for r in only.rows} == {
        ("design", "middle"), ("ablation", "middle"), ("closed", None), ("oracle", None)}  # fmt: skip
    gold = ablation_summary(only.rows)["gold_sets"]["by_k"][str(K)]["arms"]
    expected = goldset_summary(full.rows)["by_k"][str(K)]["arms"]  # type: ignore[index]
    assert gold == expected and gold["middle"]["questions"] == 4
    md = write_ablation_outputs(tmp_path / "only", only.rows, only.settings).read_text(encoding="utf-8")
    assert "Anchor arms at the middle design (4 questions)" in md and "default minus plain" in md


def test_the_cli_writes_the_ablation_summary_and_no_slot_curve(tmp_path: Path, edge_backend: None) -> None:  # noqa: F811
    out = tmp_path / "abl"
    args = ["bench", "--model", "edge:x", "--k", str(K), "--questions", "4", "--direct", "0", "--ablation", "4",
            "--ablation-slots", "1,3", "--arms", "minimal", "--ablation-only", "--no-progress", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "ablation summary:" in res.output and "gap recovered" not in res.output
    assert not (out / "bench-summary.json").exists() and not (out / "report.html").exists()
    summary = json.loads((out / "ablation-summary.json").read_text(encoding="utf-8"))
    assert summary["by_k"][str(K)]["ablation_vs_plain"]["minimal"]["pairs"] == 8
    assert len(read_rows(out / "bench.jsonl")) == 4 * 2 * 2 + 4 * 2
    assert "`minimal`" in (out / "ablation-summary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"ablation_questions": 0}, "needs ablation questions and arms"),
        ({"ablation_arms": ()}, "needs ablation questions and arms"),
        ({"compress_arms": ("drop",)}, "runs the ablation alone"),
        ({"psc_calls": 3}, "runs the ablation alone"),
    ],
)
def test_settings_that_cannot_mean_anything_are_typed_errors(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchError, match=message) as err:
        _config(ablation_only=True, **kw)
    assert isinstance(err.value, ValueError)


def test_the_cli_refuses_them_in_one_line_before_any_model_loads(tmp_path: Path) -> None:
    out = tmp_path / "never"
    res = subprocess.run([sys.executable, "-m", "litm", "bench", "--ablation-only", "--ablation", "0", "--out",
                          str(out)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 2 and "needs ablation questions" in res.stderr and len(res.stderr.splitlines()) == 1
    assert not out.exists()


def test_a_copied_full_run_is_not_asked_again(tmp_path: Path, answers: dict[str, str]) -> None:
    run_bench(EdgeModel(answers), _config(), tmp_path / "full", progress=False)
    shutil.copytree(tmp_path / "full", tmp_path / "copy")
    model = EdgeModel(answers)
    run = run_bench(model, _config(ablation_only=True), tmp_path / "copy", resume=True, progress=False)
    assert model.calls == 0 and run.answered == 0


def test_a_refresh_rewrites_the_ablation_summary_and_no_slot_curve(tmp_path: Path, answers: dict[str, str]) -> None:
    out = tmp_path / "abl"
    run = run_bench(EdgeModel(answers), _config(ablation_only=True), out, progress=False)
    written = write_ablation_outputs(out, run.rows, run.settings).with_suffix(".json").read_text(encoding="utf-8")
    (out / "ablation-summary.json").unlink()
    res = CliRunner().invoke(app, ["report", str(out), "--refresh"])
    assert res.exit_code == 0, res.output
    assert "ablation-summary.json" in res.output and "no HTML report" in res.output
    assert (out / "ablation-summary.json").read_text(encoding="utf-8") == written
    assert not (out / "bench-summary.json").exists() and not (out / "report.html").exists()
    # The Python API writes what the command writes.
    assert run.write_outputs().summary_path == out / "ablation-summary.json"
    assert not (out / "bench-summary.json").exists()
