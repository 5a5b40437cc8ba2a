"""The multi-gold benchmark (gold-set designs, strategies on the retriever order, anchor arms) and --data files.

A scripted model with a known dead zone answers only when every gold document sits in the first two or the
last two slots, whatever the prompt format; so each design, strategy and arm has a known expected score.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from litm.bench._goldsets import goldset_summary
from litm.bench._outputs import refresh_outputs
from litm.bench._runner import BenchConfig, BenchError, run_bench
from litm.cli import app
from litm.errors import DataFileError
from litm.models._spec import register_backend, unregister_backend
from test_bench_runner import EdgeModel

K = 6


def _records() -> list[dict[str, Any]]:
    out = []
    for q in range(4):
        docs = [{"id": f"q{q}d{i}", "title": f"Title{q}x{i}", "text": f"Filler text {i} of question {q}.",
                 "score": float(10 - i)} for i in range(7)]  # fmt: skip
        # The golds' retriever ranks differ by question: (1, 2), (2, 4), (3, 4), (6, 7) among 7 documents.
        for i in [(0, 1), (1, 3), (2, 3), (5, 6)][q]:
            docs[i] |= {"gold": True, "text": f"Part {i} of answer{q}."}
        out.append({"id": f"q{q}", "question": f"What joins the parts of {q}?", "answers": [f"answer{q}"],
                    "type": "bridge" if q % 2 else "comparison", "documents": docs})  # fmt: skip
    return out


class TwoEdgesModel(EdgeModel):
    """Answers a question only when every gold document is among the first two or the last two documents."""

    name = "two-edges"
    spec = "twoedges:test"

    def __init__(self, records: list[dict[str, Any]]) -> None:
        super().__init__({})
        self.by_question = {r["question"]: r for r in records}

    def reply(self, prompt: str) -> str:
        question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        record = self.by_question[question]
        # Document order from where each title first appears: the same in every arm's format.
        seen = sorted((prompt.find(d["title"] + ")") if "Document [" in prompt else prompt.find(d["title"]), d)
                      for d in record["documents"] if d["title"] in prompt)  # fmt: skip
        order = [d for _, d in seen]
        n = len(order)
        slots = [i + 1 for i, d in enumerate(order) if d.get("gold")]
        edges = n <= 4 or all(s <= 2 or s > n - 2 for s in slots)
        return f" {record['answers'][0]}" if edges and slots else " the filler"


@pytest.fixture()
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    return path


def _config(path: Path, **kw: Any) -> BenchConfig:
    base: dict[str, Any] = {
        "questions": 4,
        "ks": (K,),
        "data": str(path),
        "strategies": ("none", "edges", "random"),
        "ablation_arms": ("default", "bracket"),
        "ablation_questions": 4,
        "direct_questions": 4,
    }
    return BenchConfig(**{**base, **kw})


def test_designs_strategies_and_arms_score_as_the_model_dictates(tmp_path: Path, data_file: Path) -> None:
    model = TwoEdgesModel(_records())
    run = run_bench(model, _config(data_file), tmp_path / "out", progress=False)
    assert run.settings["identity"]["data"] == str(data_file) and "file's rank / score" in run.settings["data"]
    s = goldset_summary(run.rows)["by_k"][str(K)]
    assert s["questions"] == 4
    em = {d: c["em"]["acc"] for d, c in s["designs"].items()}
    assert em == {"early": 1.0, "middle": 0.0, "split": 1.0, "late": 1.0}
    assert s["middle_vs"]["late"]["em"]["diff"] == -1.0 and s["middle_vs"]["late"]["em"]["lower"] == 4
    assert s["designs"]["middle"]["f1"]["mean"] == 0.0 and s["designs"]["early"]["hit"]["acc"] == 1.0
    # In rank order (k=6 keeps the golds and the best 4 others): gold ranks (1,2) and (5,6) are at the edges,
    # (2,4) and (3,4) are not. Edges sends ranks 1..6 to slots 1,6,2,5,3,4: only (5,6) ends in the middle.
    table = s["strategies"]["table"]
    assert table["none"]["em"]["acc"] == 0.5 and table["edges"]["em"]["acc"] == 0.75
    assert s["strategies"]["vs_none"]["edges"]["em"]["diff"] == 0.25
    # Each arm renders the same documents in the middle design: the scripted model is blind to formatting.
    arms = s["arms"]["middle"]
    assert set(arms["table"]) == {"plain", "default", "bracket"} and arms["questions"] == 4
    assert all(v["em"]["diff"] == 0.0 for v in arms["vs_plain"].values())
    assert s["oracle"]["em"]["acc"] == 1.0 and s["closed_book"]["em"]["acc"] == 0.0
    assert set(s["kinds"]) == {"bridge", "comparison"}
    rows = {r["key"]: r for r in run.rows}
    assert rows[f"design|k={K}|q=q1|d=split"]["gold_slots"] == [1, K]
    assert rows[f"direct|k={K}|q=q1|strategy=none|order=1,2,3,4,5,6"]["gold_slots"] == [2, 4]

    out = refresh_outputs(tmp_path / "out", plots=False)
    assert out.summary["gold_sets"]["by_k"][str(K)]["questions"] == 4 and out.summary["calls"]["answered"] > 0
    md = (tmp_path / "out" / "bench-summary.md").read_text(encoding="utf-8")
    assert "Multi-gold questions, k=6: 4 questions" in md and "edges minus none: EM +0.250" in md
    # A resume must not mix data sets.
    with pytest.raises(BenchError, match="different settings"):
        run_bench(model, _config(data_file, data="hotpotqa"), tmp_path / "out", resume=True, progress=False)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(BenchError, match="unknown gold-set designs"):
        BenchConfig(ablation_designs=("centre",))
    with pytest.raises(BenchError, match="unknown ablation arms"):
        BenchConfig(ablation_arms=("plain",))


@pytest.fixture()
def twoedges_backend() -> Iterator[None]:
    register_backend("twoedges", lambda spec, **_: TwoEdgesModel(_records()), replace=True)
    yield
    unregister_backend("twoedges")


def test_cli_bench_data_file(tmp_path: Path, data_file: Path, twoedges_backend: None) -> None:
    args = ["bench", "--model", "twoedges:x", "--data", str(data_file), "--k", str(K), "-n", "4", "--no-progress",
            "--no-plots", "--strategies", "none,edges"]  # fmt: skip
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    assert "multi-gold, k=6: 4 questions" in res.output and "middle: em 0.000" in res.output
    summary = json.loads((tmp_path / "cli" / "bench-summary.json").read_text(encoding="utf-8"))
    assert set(summary["gold_sets"]["by_k"]["6"]["arms"]["middle"]["table"]) == {"plain", "default", "bracket"}
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps({"question": "q", "answers": ["a"], "documents": [{"text": "t"}]}) + "\n")
    res = CliRunner().invoke(app, ["bench", "--model", "twoedges:x", "--data", str(broken), "--out",
                                   str(tmp_path / "bad"), "--no-progress"])  # fmt: skip
    # A LitmError: litm's entry point prints it as one "litm: error: ..." line and exits 2.
    assert isinstance(res.exception, DataFileError) and res.exit_code != 0
    assert str(res.exception).startswith(f"{broken}:1: documents: no gold document") and "\n" not in str(res.exception)


def test_hotpotqa_on_the_embedded_model(tmp_path: Path) -> None:
    from litm.models import load_model

    model = load_model("local", n_threads=1)
    config = BenchConfig(
        questions=1,
        ks=(4,),
        data="hotpotqa",
        retriever="bm25",
        strategies=("none", "edges"),
        ablation_arms=("bracket",),
        ablation_questions=1,
        direct_questions=1,
        likelihood="on",
    )
    run = run_bench(model, config, tmp_path, progress=False)
    phases = sorted(str(r["phase"]) for r in run.rows)
    assert phases == ["ablation", "closed", "design", "design", "design", "design", "direct", "direct", "oracle"]
    for r in run.rows:
        assert r["answers"] == ["yes"] and isinstance(r["em"], bool) and 0.0 <= r["f1"] <= 1.0
        assert r["likelihood"] < 0 and r["answer_logprobs"][0]["answer"] == " yes"  # a completion prompt
    bracket = next(r for r in run.rows if r["phase"] == "ablation")
    assert bracket["design"] == "middle" and bracket["gold_slots"] == [2, 3]
    s = goldset_summary(run.rows)["by_k"]["4"]
    assert s["questions"] == 1 and set(s["designs"]) == {"early", "middle", "split", "late"}
    assert "bm25" in run.settings["data"] and run.settings["identity"]["retriever"] == "bm25"


def test_anchor_element_arms_are_paired_with_the_full_default(tmp_path: Path, data_file: Path) -> None:
    config = _config(data_file, ablation_arms=("default", "bracket", "minimal", "default-recap"))
    run = run_bench(TwoEdgesModel(_records()), config, tmp_path / "out", progress=False)
    arms = goldset_summary(run.rows)["by_k"][str(K)]["arms"]["middle"]
    assert set(arms["vs_default"]) == {"minimal", "default-recap"}  # bracket is a style of its own
    assert arms["vs_default"]["minimal"]["em"]["diff"] == 0.0
    refresh_outputs(tmp_path / "out", plots=False)
    md = (tmp_path / "out" / "bench-summary.md").read_text(encoding="utf-8")
    assert "- minimal minus default: EM +0.000" in md
