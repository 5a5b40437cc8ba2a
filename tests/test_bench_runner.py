"""The benchmark runner, CLI and report with a scripted model that has a known dead zone (fast, no weights)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.bench._analysis import summarize
from litm.bench._cutoff import cutoff_note
from litm.bench._data import load_items
from litm.bench._report import write_report
from litm.bench._runner import BenchConfig, BenchError, run_bench
from litm.bench._settings import recorded_batch
from litm.cli import app
from litm.eval._scoring import normalize
from litm.models._base import Completion, GenerationRequest, Model
from litm.models._spec import register_backend, unregister_backend
from litm.probe._testing import WordTokenizer

pytest.importorskip("bm25s")

_SPLIT = re.compile(r"\nDocument \[\d+\]|\n<document ")


class EdgeModel(Model):
    """Answers from the document holding an answer only when it is the first or the last document."""

    name = "edge-model"
    spec = "edge:test"

    def __init__(self, answers: dict[str, str], remote: bool = False) -> None:
        self.answers = answers
        self.remote = remote
        self.concurrency = 4 if remote else 1
        self.calls = 0

    @property
    def supports_chat(self) -> bool:
        return False  # a base model: plain completion prompts

    @property
    def context_window(self) -> int:
        return 100_000

    @property
    def tokenizer(self) -> WordTokenizer:
        return WordTokenizer()

    def reply(self, prompt: str) -> str:
        """The answer when the document holding it is first or last, else " I do not know"."""
        question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        answer = self.answers[question]
        docs = _SPLIT.split(prompt)[1:]
        where = [i for i, d in enumerate(docs) if normalize(answer) in normalize(d)]
        return f" {answer}" if where and where[0] in (0, len(docs) - 1) else " I do not know"

    def _generate(self, request: GenerationRequest) -> Completion:
        prompt = request.prompt
        assert isinstance(prompt, str)
        self.calls += 1
        return Completion(self.reply(prompt), 10, 3, 0.001, "stop", self.name)


@pytest.fixture(scope="module")
def answers() -> dict[str, str]:
    return {it.question: it.answers[0] for it in load_items(6, k=4)}


def _config(**kw: Any) -> BenchConfig:
    base: dict[str, Any] = {"questions": 6, "ks": (4,), "direct_questions": 4, "ablation_questions": 2, "max_tokens": 8}
    return BenchConfig(**{**base, **kw})


def test_run_derivation_matches_direct_runs_and_resume_skips_work(tmp_path: Path, answers: dict[str, str]) -> None:
    model = EdgeModel(answers)
    run = run_bench(model, _config(), tmp_path, progress=False)
    keys = [r["key"] for r in run.rows]
    assert len(keys) == len(set(keys))
    s = summarize(run.rows, run.settings)["by_k"]["4"]
    assert s["questions"] == 6
    assert [c["acc"] for c in s["slot_accuracy"]] == [1.0, 0.0, 0.0, 1.0]
    assert s["dead_zone"]["dead_zone"] is True
    # This model depends only on the gold passage's slot, so every direct run agrees with the derivation.
    reordered = s["direct_check"]["all reordered"]
    assert reordered["agree"] == 1.0 and 0 < reordered["n"] < sum(v["n"] for v in s["direct_check"].values())
    assert {"none", "edges", "pyramid", "langchain", "profile", "random"} <= set(s["direct_check"])
    # Ranks 1 and 2 go to the edges under edges / pyramid / profile: all their hits come at ranks 1-2.
    for name in ("edges", "pyramid", "profile"):
        assert [c["acc"] for c in s["derived"][name]] == [1.0, 1.0, 0.0, 0.0]
    assert s["headline"]["decaying"]["pyramid"]["gap_recovered"] > s["headline"]["decaying"]["none"]["gap_recovered"]
    assert s["oracle"]["acc"] == 1.0 and s["closed_book"]["acc"] == 0.0
    assert set(s["ablation"]) == {"plain", "plain-both", "anchored", "anchored-both"}
    # Identical prompts are answered once (langchain == pyramid for even k; none == the slot run).
    assert run.reused > 0 and model.calls == run.answered
    assert any(r.get("same_prompt_as") for r in run.rows if r.get("strategy") == "langchain")

    with pytest.raises(BenchError):
        run_bench(model, _config(), tmp_path, progress=False)  # existing run, no resume
    before = model.calls
    again = run_bench(model, _config(), tmp_path, resume=True, progress=False)
    assert model.calls == before and again.answered == 0 and len(again.rows) == len(run.rows)
    # Each resume is recorded beside the first stretch, which keeps its own start and machine.
    first = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    run_bench(model, _config(), tmp_path, resume=True, progress=False)
    twice = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert twice["started"] == first["started"] and twice["machine"] == first["machine"]
    assert len(first["resumes"]) == 1 and twice["resumes"][0] == first["resumes"][0] and len(twice["resumes"]) == 2
    assert all(set(r) == {"at", "machine"} for r in twice["resumes"])
    with pytest.raises(BenchError):
        run_bench(model, _config(max_tokens=9), tmp_path, resume=True, progress=False)  # settings differ


def test_torn_log_is_repaired_and_finished(tmp_path: Path, answers: dict[str, str]) -> None:
    full = run_bench(EdgeModel(answers), _config(questions=2, direct_questions=1), tmp_path / "a", progress=False)
    log = tmp_path / "b" / "bench.jsonl"
    log.parent.mkdir()
    lines = (tmp_path / "a" / "bench.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:5]) + lines[5][:20], encoding="utf-8")  # killed mid-write
    (tmp_path / "b" / "run.json").write_text((tmp_path / "a" / "run.json").read_text(encoding="utf-8"))
    model = EdgeModel(answers)
    run = run_bench(model, _config(questions=2, direct_questions=1), tmp_path / "b", resume=True, progress=False)
    assert sorted(r["key"] for r in run.rows) == sorted(r["key"] for r in full.rows)
    assert model.calls == full.answered - 5 + sum(1 for r in full.rows[:5] if r.get("same_prompt_as"))


def test_remote_models_run_concurrently_with_the_same_results(tmp_path: Path, answers: dict[str, str]) -> None:
    local = run_bench(EdgeModel(answers), _config(questions=2, direct_questions=1), tmp_path / "l", progress=False)
    remote = run_bench(
        EdgeModel(answers, remote=True), _config(questions=2, direct_questions=1), tmp_path / "r", progress=False
    )

    def hits(rows: list[dict[str, Any]]) -> dict[str, bool]:
        return {r["key"]: r["hit"] for r in rows}

    assert hits(remote.rows) == hits(local.rows)


@pytest.fixture()
def edge_backend(answers: dict[str, str]) -> Iterator[None]:
    register_backend("edge", lambda spec, **_: EdgeModel(answers), replace=True)
    yield
    unregister_backend("edge")


def test_cli_bench_writes_summary_plots_and_an_offline_report(tmp_path: Path, edge_backend: None) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "bench"
    args = ["bench", "--model", "edge:x", "--k", "4", "--questions", "4", "--direct", "2", "--ablation", "2"]
    res = CliRunner().invoke(app, [*args, "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "gap recovered" in res.output
    summary = json.loads((out / "bench-summary.json").read_text(encoding="utf-8"))
    assert summary["by_k"]["4"]["questions"] == 4
    assert {p.name for p in out.glob("*.png")} >= {"bench-k4-accuracy.png", "bench-k4-placement.png"}
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count('src="data:image/png;base64,') >= 3
    assert not re.search(r"(src|href)=\"(https?:)?//", html) and "<script" not in html
    assert "Direct check" in html and "gap recovered" in html
    # Existing run without --resume: a one-line error; with --resume nothing is asked again.
    res = CliRunner().invoke(app, [*args, "--out", str(out), "--no-progress"])
    assert res.exit_code != 0
    res = CliRunner().invoke(app, [*args, "--out", str(out), "--no-progress", "--resume", "--no-plots"])
    assert res.exit_code == 0 and res.output.startswith("0 prompts answered")
    # litm report bundles a probe directory too.
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "summary.json").write_text(json.dumps({"needle": {"findings": ["no dead zone at 512 tokens"]}}))
    (probe / "profile.json").write_text("{}")
    (probe / "needle-heatmap.png").write_bytes((out / "bench-k4-accuracy.png").read_bytes())
    res = CliRunner().invoke(app, ["report", str(out), "--include", str(probe), "--out", str(tmp_path / "all.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "all.html").read_text(encoding="utf-8")
    assert "Dead-zone probe" in page and "no dead zone at 512 tokens" in page and "Strategy benchmark" in page


def test_report_refuses_an_empty_directory(tmp_path: Path) -> None:
    from litm.errors import LitmError

    with pytest.raises(LitmError):
        write_report(tmp_path)


class ChatEdgeModel(EdgeModel):
    """The same model behind a chat template: it must receive the prompt as one user message."""

    @property
    def supports_chat(self) -> bool:
        return True

    def _generate(self, request: GenerationRequest) -> Completion:
        prompt = request.prompt
        assert not isinstance(prompt, str) and len(prompt) == 1 and prompt[0]["role"] == "user"
        return super()._generate(dataclasses.replace(request, prompt=prompt[0]["content"]))


def test_instruct_models_get_the_prompt_as_one_chat_turn(tmp_path: Path, answers: dict[str, str]) -> None:
    cfg = _config(questions=2, direct_questions=1, ablation_questions=0)
    run = run_bench(ChatEdgeModel(answers), cfg, tmp_path, progress=False)
    assert {r["format"] for r in run.rows} == {"chat"} and run.settings["identity"]["prompt_format"] == "chat"
    assert [c["acc"] for c in summarize(run.rows)["by_k"]["4"]["slot_accuracy"]] == [1.0, 0.0, 0.0, 1.0]
    with pytest.raises(BenchError):
        BenchConfig(prompt_format="xml")


def test_progress_is_logged_as_plain_lines_without_a_terminal(
    tmp_path: Path, answers: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # A run under nohup or CI has no terminal: a live bar would print nothing until the end.
    run_bench(EdgeModel(answers), _config(questions=2, direct_questions=1), tmp_path, progress=True)
    lines = capsys.readouterr().err.splitlines()
    stages = [ln for ln in lines if ln.startswith("bench slots+controls: ")]
    assert stages[0].startswith("bench slots+controls: 0/") and stages[-1].endswith(tuple("0123456789s"))
    done, total = stages[-1].split(": ", 1)[1].split(" ", 1)[0].split("/")
    assert done == total and int(total) > 0 and "(100%)" in stages[-1]
    assert any(ln.startswith("bench direct: ") for ln in lines)


def test_a_local_models_batch_is_part_of_the_run_and_a_resume_must_match_it(
    tmp_path: Path, answers: dict[str, str]
) -> None:
    """llama.cpp's batch changes what a cold run computes (and what aligned reuse keeps): it is recorded, a
    resume with another batch is refused, and a run recorded before the setting counts as 512."""
    config = _config(questions=2, direct_questions=0, ablation_questions=0)
    model = EdgeModel(answers)
    model.n_batch = 64  # type: ignore[attr-defined]  # what a LocalModel carries
    run_bench(model, config, tmp_path, progress=False)
    settings_file = tmp_path / "run.json"
    settings = json.loads(settings_file.read_text())
    assert settings["identity"]["n_batch"] == 64 and settings["model"]["n_batch"] == 64
    model.n_batch = 512  # type: ignore[attr-defined]
    with pytest.raises(BenchError, match=r"different settings \(n_batch\)"):
        run_bench(model, config, tmp_path, resume=True, progress=False)
    del settings["identity"]["n_batch"]  # as a run made before the setting existed
    settings_file.write_text(json.dumps(settings))
    assert len(run_bench(model, config, tmp_path, resume=True, progress=False).rows) > 0
    # What the CLI loads for a resume: the run's own batch, 512 before the setting, nothing for a remote model.
    local = tmp_path / "local"
    local.mkdir()
    (local / "run.json").write_text(json.dumps({"identity": {"model": "local:qwen2.5-coder-0.5b"}}))
    assert recorded_batch(local) == 512
    (local / "run.json").write_text(json.dumps({"identity": {"model": "local", "n_batch": 64}}))
    assert recorded_batch(local) == 64
    (local / "run.json").write_text(json.dumps({"identity": {"model": "openai:gpt-4o-mini"}}))
    assert recorded_batch(local) is None and recorded_batch(tmp_path / "none") is None


def test_a_run_writes_its_own_outputs_through_the_public_api(tmp_path: Path, answers: dict[str, str]) -> None:
    import litm.bench as bench

    run = bench.run_bench(EdgeModel(answers), _config(questions=2, direct_questions=1), tmp_path, progress=False)
    out = run.write_outputs(plots=False)
    assert isinstance(out, bench.BenchOutputs) and out.summary_path == tmp_path / "bench-summary.json"
    assert json.loads(out.summary_path.read_text())["by_k"]["4"]["questions"] == 2
    # The rows re-read from bench.jsonl give the same summary as the rows the run returned.
    assert bench.refresh_outputs(tmp_path, plots=False).summary["by_k"] == out.summary["by_k"]
    assert bench.summarize(run.rows, run.settings)["by_k"]["4"]["questions"] == 2


class ChattyModel(EdgeModel):
    """The edge model's answer, after a preamble of eight words, cut at the request's cap as a real model is."""

    def _generate(self, request: GenerationRequest) -> Completion:
        prompt = request.prompt
        assert isinstance(prompt, str)
        words = ("According to the documents provided, the answer is" + self.reply(prompt)).split()
        said = words[: request.max_tokens]
        return Completion(" ".join(said), 10, len(said), 0.001, "length" if len(said) < len(words) else "stop")


def test_a_run_whose_replies_the_cap_cut_off_says_so_and_a_higher_cap_does_not(
    tmp_path: Path, answers: dict[str, str]
) -> None:
    # Cut at 4 words, every reply misses; the warning names the cap and the option that raises it.
    register_backend("chatty", lambda spec, **_: ChattyModel(answers), replace=True)
    try:
        args = ["bench", "--model", "chatty:x", "--k", "4", "--questions", "2", "--direct", "1", "--ablation", "0"]
        res = CliRunner().invoke(app, [*args, "--max-tokens", "4", "--out", str(tmp_path / "a"), "--no-progress"])
        assert res.exit_code == 0, res.output
        warned = [line for line in res.output.splitlines() if line.startswith("warning:")]
        assert len(warned) == 1 and "were cut off at max_tokens 4 (--max-tokens)" in warned[0], res.output
        # With room for the preamble the same model answers at the edges, and nothing is said.
        res = CliRunner().invoke(app, [*args, "--max-tokens", "32", "--out", str(tmp_path / "b"), "--no-progress"])
        assert res.exit_code == 0, res.output
        assert "warning:" not in res.output
        summary = json.loads((tmp_path / "b" / "bench-summary.json").read_text())
        assert summary["by_k"]["4"]["slot_accuracy"][0]["acc"] > 0
    finally:
        unregister_backend("chatty")
    # The library returns the same note for Python callers.
    run = run_bench(ChattyModel(answers), _config(questions=2, direct_questions=1, max_tokens=4), tmp_path / "c",
                    progress=False)  # fmt: skip
    n = len(run.rows)
    assert run.notes == [cutoff_note(run.rows, 4)] and run.notes[0].startswith(f"{n} of {n} replies (100%) were cut")
