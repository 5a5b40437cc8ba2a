"""``litm rag``: the two commands of the README's RAG quick start, run for real on a folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = {
    "france.md": "# France\n\nParis is the capital of France. The Eiffel Tower was finished in 1889.\n",
    "cats.txt": "Cats sleep for most of the day and hunt at dawn and dusk.\n",
    "italy.md": "# Italy\n\nRome is the capital of Italy.\n",
}


def litm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "litm", *args], capture_output=True, text=True, timeout=600)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def index(tmp_path: Path, folder: Path) -> Path:
    proc = litm("index", str(folder), "--out", str(tmp_path / "idx"), "--no-dense", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "idx"


def test_bad_input_is_one_line_and_exit_code_2(tmp_path: Path, index: Path) -> None:
    missing = litm("rag", str(tmp_path / "nowhere"), "why?")
    assert missing.returncode == 2 and missing.stderr.startswith("litm: error:") and "nowhere" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad = litm("rag", str(index), "why?", "--strategy", "middle-out")
    assert bad.returncode == 2 and "middle-out" in bad.stderr
    spec = litm("rag", str(index), "why?", "--model", "nonsense:x")
    assert spec.returncode == 2 and "nonsense" in spec.stderr and "Traceback" not in spec.stderr


@pytest.mark.model
def test_rag_answers_cites_and_explains(index: Path) -> None:
    proc = litm("rag", str(index), "What is the capital of France?", "--explain")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.startswith("answer: Paris\n")
    assert "attribution (litm's, not the model's citation" in out
    assert "france.md#0 france.md [0:" in out and "the answer is at characters 10-15 of france.md" in out
    # Two chunks share a word with the question (BM25 returns no chunk that shares none): below min_docs.
    assert "plan (auto): 1:france.md#0(rank 1)  2:italy.md#0(rank 2)" in out
    assert "strategy: auto (2 documents)" in out and "rank order kept" in out
    assert "(exact), budget 32768 (the model's context window)" in out
    assert "cost: unknown (no price for local models" in out
    assert "timings: load" in out and "generate" in out


@pytest.mark.model
def test_rag_json_and_options_reach_the_pipeline(index: Path) -> None:
    # First-token margin on this prompt: " Paris" -0.41 against " The" -2.74 nats.
    proc = litm("rag", str(index), "What is the capital of France?", "--json", "--strategy", "none", "--k", "2",
                "--budget", "4000", "--retriever", "bm25", "--max-tokens", "8")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["answer"] == "Paris" and data["strategy"] == "none" and len(data["hits"]) == 2
    assert data["tokens"]["budget"] == 4000 and data["tokens"]["budget_source"] == "given"
    assert data["tokens"]["input"] == data["tokens"]["prompt"] and data["tokens"]["output"] <= 8
    assert data["attribution"][0]["id"] == "france.md#0" and data["cost_usd"] is None
    assert data["retriever"] == "bm25" and data["plan"]["slots"][0]["rank"] == 1


@pytest.mark.model
def test_the_readme_two_commands_on_a_folder_with_vectors(tmp_path: Path, folder: Path) -> None:
    """The quick start as a new user runs it: `litm index DIR --out IDX` (MiniLM vectors, the default), then
    `litm rag IDX "question"` with every default: hybrid retrieval, auto placement (no profile: edges), the
    embedded model."""
    made = litm("index", str(folder), "--out", str(tmp_path / "idx"), "--no-progress")
    assert made.returncode == 0, made.stderr
    # The greedy path to " 1889" is clear at every token: the smallest margin is the first (" " -1.30 against
    # " The" -2.06 nats), so llama.cpp's CPU-specific kernels are unlikely to flip it.
    proc = litm("rag", str(tmp_path / "idx"), "When was the Eiffel Tower finished?", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["retriever"].startswith("hybrid") and data["strategy"] == "auto"
    assert "1889" in data["answer"]
    ref = data["attribution"][0]
    assert ref["id"] == "france.md#0" and ref["source"] == "france.md"
    start, end = ref["span"]
    assert "1889" in DOCS["france.md"][start:end]


def test_a_budget_too_small_names_the_flags(index: Path) -> None:
    # Issue 40, defect 10: the error told CLI users to "raise max_input_tokens". Nothing is sent: the gate refuses.
    proc = litm("rag", str(index), "Where is Paris?", "--model", "openai:gpt-4o", "--budget", "20")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "litm: error: --max-tokens 64 leaves no input budget of --budget 20 (lower --max-tokens or raise --budget)\n"
    )
    proc = litm("rag", str(index), "Where is Paris?", "--model", "openai:gpt-4o", "--budget", "30", "--max-tokens", "9")
    assert proc.returncode == 2 and "(raise --budget, lower --max-tokens, or shorten" in proc.stderr
    assert "max_input_tokens" not in proc.stderr
