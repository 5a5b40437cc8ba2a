"""The benchmark's compression arms: compress-only runs paired with a baseline run, resume, multi-gold designs,
the summary's paired comparisons, and the CLI. The scripted models answer only from the first or last
document (a dead zone by construction); one end-to-end run uses a real local model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from litm.bench._compression import COMPRESS_ARMS, compress_keys
from litm.bench._compression_summary import compression_summary, write_compression_outputs
from litm.bench._data import load_items
from litm.bench._runner import BenchConfig, BenchError, run_bench
from litm.models import load_model
from test_bench_goldsets import TwoEdgesModel, _records
from test_bench_runner import EdgeModel

pytest.importorskip("bm25s")

K = 6


@pytest.fixture(scope="module")
def answers() -> dict[str, str]:
    return {it.question: it.answers[0] for it in load_items(4, k=K)}


def _base(**kw: Any) -> BenchConfig:
    opts: dict[str, Any] = {"questions": 4, "ks": (K,), "direct_questions": 0, "ablation_questions": 0,
                            "max_tokens": 8}  # fmt: skip
    return BenchConfig(**{**opts, **kw})


def test_compress_only_pairs_with_the_baseline_and_resumes(
    tmp_path: Path, answers: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    base_dir, out = tmp_path / "base", tmp_path / "compress"
    run_bench(EdgeModel(answers), _base(), base_dir, progress=False)
    config = _base(
        compress_arms=("drop", "embed-edges"), compress_ratios=(2.0,), compress_slots=(1, 3, 6), compress_only=True,
        baseline=str(base_dir),
    )  # fmt: skip
    model = EdgeModel(answers)
    run = run_bench(model, config, out, progress=False)
    rows = {r["key"]: r for r in run.rows}
    # Only compression rows, one per question, slot, arm and ratio (edges makes the three slots one prompt).
    assert all(r["phase"] == "compress" for r in run.rows) and len(rows) == 4 * 3 * 2
    assert run.reused > 0 and model.calls == run.answered
    row = rows[f"compress|k={K}|q={load_items(1, k=K)[0].qid}|s=3|arm=embed-edges|x=2"]
    assert row["doc_tokens"] <= row["budget"] < row["original_doc_tokens"]
    assert row["answer_kept"] and row["gold_positions"] == [1]  # edges puts the best-scored document first
    summary = compression_summary(run.rows, [json.loads(x) for x in (base_dir / "bench.jsonl").open()])
    s = summary["by_k"][str(K)]
    assert s["questions"] == 4 and s["slots"] == [1, 3, 6]
    # The model reads only the first and last documents: the original misses slot 3, edges-placed compression
    # does not, and the pairing says so question by question.
    assert s["original"]["slots"]["3"]["acc"] == 0.0 and s["original"]["slots"]["1"]["acc"] == 1.0
    edges = s["arms"]["embed-edges@2"]
    assert edges["slots"]["3"]["acc"] == 1.0 and edges["spread"] == 0.0
    assert edges["slots"]["3"]["vs_original"]["hits"] == {
        "diff": 1.0, "lo": 1.0, "hi": 1.0, "better": 4, "worse": 0, "n": 4, "p_value": 0.125,
    }  # fmt: skip
    assert "vs_drop" in edges["slots"]["3"] and "vs_drop" not in s["arms"]["drop@2"]["slots"]["3"]
    assert s["oracle"]["acc"] == 1.0
    md = (out / "compress-summary.md") if write_compression_outputs(out, run.rows, run.settings) else None
    assert md is not None and "embed-edges@2" in md.read_text(encoding="utf-8")

    # A resume answers nothing; a new arm on resume answers only its own prompts.
    again = run_bench(model, config, out, resume=True, progress=False)
    assert again.answered == 0
    more = run_bench(model, _base(**{**config.__dict__, "compress_arms": ("drop", "embed-edges", "lead")}), out,
                     resume=True, progress=True)  # fmt: skip
    assert {r["arm"] for r in more.rows} == {"drop", "embed-edges", "lead"} and len(more.rows) == 4 * 3 * 3
    # Its progress counts only the 12 new rows (4 questions x 3 slots), not the 24 it already had, and ends full.
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bench compress")]
    assert lines and lines[-1].startswith(f"bench compress k={K}: 12/12 (100%)")
    assert (out / "compress-scores.jsonl").stat().st_size > 0


def test_compress_only_without_a_baseline_runs_the_originals_it_pairs_with(
    tmp_path: Path, answers: dict[str, str]
) -> None:
    # A model with no committed full run (the 1.5B at k = 20): the compression run answers the original prompt
    # at each compressed slot itself, the very rows (keys and prompts) a full run makes, and pairs with them.
    compress = {"compress_arms": ("drop", "embed-edges"), "compress_ratios": (2.0,), "compress_slots": (1, 3)}
    alone = run_bench(EdgeModel(answers), _base(**compress, compress_only=True), tmp_path / "alone", progress=False)
    originals = [r for r in alone.rows if r["phase"] != "compress"]
    assert sorted((r["phase"], r.get("slot", 0)) for r in originals) == (
        [("closed", 0)] * 4 + [("oracle", 0)] * 4 + [("slot", 1)] * 4 + [("slot", 3)] * 4
    )
    full_dir = tmp_path / "full"
    run_bench(EdgeModel(answers), _base(), full_dir, progress=False)
    full = {r["key"]: r for r in (json.loads(x) for x in (full_dir / "bench.jsonl").open())}
    assert all(r["prompt_sha"] == full[r["key"]]["prompt_sha"] for r in originals)
    paired = run_bench(EdgeModel(answers), _base(**compress, compress_only=True, baseline=str(full_dir)),
                       tmp_path / "paired", progress=False)  # fmt: skip
    assert _untimed(compression_summary(alone.rows)) == _untimed(compression_summary(paired.rows, list(full.values())))


def _untimed(value: object) -> object:
    """A summary without its seconds (``compress_s``), which differ from run to run."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "compress_s"}
    return value


def test_multi_gold_designs_keep_every_gold_and_are_compared_by_em(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    base = _base(data=str(path), strategies=("none",), ablation_arms=("default",))
    run_bench(TwoEdgesModel(_records()), base, tmp_path / "base", progress=False)
    extra = {"compress_arms": ("embed",), "compress_ratios": (1.5,), "compress_designs": ("middle",),
             "compress_only": True, "baseline": str(tmp_path / "base")}  # fmt: skip
    config = _base(**{**base.__dict__, **extra})
    run = run_bench(TwoEdgesModel(_records()), config, tmp_path / "c", progress=False)
    assert {r["design"] for r in run.rows} == {"middle"} and all(r["gold_set"] for r in run.rows)
    s = write_compression_outputs(tmp_path / "c", run.rows, run.settings)
    summary = json.loads(s.with_suffix(".json").read_text(encoding="utf-8"))
    cell = summary["by_k"][str(K)]["gold_sets"]["arms"]["embed@1.5"]["middle"]
    assert cell["n"] == 4 and cell["all_golds_kept"] == 1.0
    # The golds sat in the middle (the model misses them) and compression leaves at most 4 documents.
    assert cell["original_em"] == 0.0 and cell["em"] == 1.0 and cell["em_vs_original"]["lower"] == 0


def test_bad_compression_settings_are_typed_errors() -> None:
    with pytest.raises(BenchError, match="unknown compression arms"):
        BenchConfig(compress_arms=("zip",))
    with pytest.raises(BenchError, match="above 1"):
        BenchConfig(compress_arms=("drop",), compress_ratios=(0.5,))
    with pytest.raises(BenchError, match="needs compression arms"):
        BenchConfig(compress_only=True)
    assert set(COMPRESS_ARMS) >= {"drop", "embed", "lm", "lm-edges"}
    item = load_items(1, k=4)[0]
    assert len(compress_keys(item, 4, ("drop", "lm"), (2.0, 4.0), (1, 4), ())) == 8


def test_cli_refuses_bad_arms_and_a_missing_baseline(tmp_path: Path) -> None:
    def litm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "litm", *args], capture_output=True, text=True, timeout=120)

    bad = litm("bench", "--compress", "zip", "--compress-only", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and "unknown compression arms" in bad.stderr and len(bad.stderr.splitlines()) == 1
    missing = litm("bench", "--compress", "drop", "--compress-only", "--baseline", str(tmp_path / "nothing"),
                   "--out", str(tmp_path / "y"))  # fmt: skip
    assert missing.returncode == 2 and "holds no bench.jsonl" in missing.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_end_to_end_with_a_real_local_model(tmp_path: Path) -> None:
    model = load_model("local:smollm2", n_threads=2)
    config = BenchConfig(
        questions=1, ks=(4,), direct_questions=0, ablation_questions=0, controls=False, max_tokens=8,
        compress_arms=("drop", "embed"), compress_ratios=(2.0,), compress_slots=(1, 4), compress_only=True,
        likelihood="on",
    )  # fmt: skip
    run = run_bench(model, config, tmp_path, progress=False)
    # No baseline: the two original prompts (slots 1 and 4) are answered too, then the four compressed ones.
    original = {r["slot"]: r for r in run.rows if r["phase"] == "slot"}
    compressed = [r for r in run.rows if r["phase"] == "compress"]
    assert len(run.rows) == 6 and sorted(original) == [1, 4] and len(compressed) == 4
    for row in compressed:
        # The budget is held in the model's own tokens, and the prompt the model read is shorter than the original.
        assert row["doc_tokens"] <= row["budget"] and row["likelihood"] < 0
        assert 0 < row["input_tokens"] < original[row["slot"]]["input_tokens"]
        assert row["scorer"] in ("retriever", "embed")


def test_a_question_missing_an_arm_is_left_out_of_the_summary() -> None:
    base = [{"phase": "slot", "k": 3, "qid": q, "slot": s, "hit": True} for q in (1, 2) for s in (1, 3)]
    cells = [(q, s, a) for q in (1, 2) for s in (1, 3) for a in ("drop", "embed")]
    rows = [{"phase": "compress", "k": 3, "qid": q, "slot": s, "arm": a, "ratio": 2.0, "hit": True,
             "answer_kept": True, "doc_tokens": 5, "original_doc_tokens": 10}
            for q, s, a in cells if (q, s, a) != (2, 3, "embed")]  # fmt: skip
    s = compression_summary(rows, base)["by_k"]["3"]
    assert s["questions"] == 1
    assert all(c["n"] == 1 for a in s["arms"].values() for c in a["slots"].values())
