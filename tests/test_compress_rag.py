"""Pipeline(compress=...) and `litm rag --compress`: the chunks are compressed for the question in the model's
own tokens before the gate, citations still map back, and bad goals are refused at construction."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from litm.errors import InvalidOptionError, InvalidProfileError
from litm.rag import Pipeline
from litm.retrieve import BM25, Index
from litm.tokens import get_tokenizer
from test_rag_pipeline import TEXTS, gpt

LONG = {
    "fr": "Paris is the capital of France. The Eiffel Tower stands in Paris. The Seine flows through the city. "
    "The Louvre holds the Mona Lisa. Paris hosted the Olympic Games in 1900, 1924 and 2024.",
    "it": "Rome is the capital of Italy. The Colosseum stands in Rome. The Tiber flows through the city. "
    "Rome was founded, by legend, in 753 BC.",
    "de": "Berlin is the capital of Germany. The Brandenburg Gate stands in Berlin. The Wall fell in 1989.",
}


@pytest.fixture
def index(tmp_path: Path) -> Index:
    idx = Index.create(tmp_path / "idx", dense=False)
    idx.add_texts([{"id": k, "text": v, "source": f"{k}.txt"} for k, v in LONG.items()])
    return idx


def test_the_pipeline_compresses_before_the_gate(index: Index) -> None:
    rag, sent = gpt(index, reply="In 1924 [fr#0].", compress="2x")
    prepared = rag.prepare("In which years did Paris host the Olympic Games?")
    squeezed = prepared.compression
    assert squeezed is not None and not sent
    tok = get_tokenizer("openai:gpt-4o-mini")
    original = sum(tok.count(h.chunk.text) for h in prepared.hits)
    assert squeezed.original_tokens == original and squeezed.tokens <= squeezed.budget <= original / 2 + 1
    assert "1900, 1924 and 2024" in " ".join(d.text for d in prepared.fit.kept)
    assert "compress" in prepared.timings
    answer = rag.generate(prepared)
    assert [c.id for c in answer.citations] == ["fr#0"]
    # litm's attribution points into the source file, through the compressed chunk's kept spans.
    grounded = [r for r in answer.attribution if r.id == "fr#0"]
    assert grounded and grounded[0].span is not None
    a, b = grounded[0].span
    assert "1924" in LONG["fr"][a:b]
    assert len(sent) == 1 and "1924 and 2024" in json.dumps(sent[0])


def test_a_goal_is_validated_at_construction(index: Index) -> None:
    for bad in ("0.5x", "lots", True, -3):
        with pytest.raises(InvalidOptionError):
            Pipeline(BM25(index), compress=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidOptionError, match="compression scorer"):
        Pipeline(BM25(index), compress="4x", compress_scorer="tfidf")


def test_compress_survives_to_dict_and_replace(index: Index) -> None:
    rag = Pipeline(index, compress=400, compress_scorer="retriever")
    data = rag.to_dict()
    assert data["init_parameters"]["compress"] == 400
    again = Pipeline.from_dict(data)
    assert (again.compress, again.compress_scorer) == (400, "retriever")
    assert rag.replace(k=2).compress == 400


def test_without_compress_nothing_changes(tmp_path: Path) -> None:
    idx = Index.create(tmp_path / "idx", dense=False)
    idx.add_texts([{"id": k, "text": v, "source": f"{k}.txt"} for k, v in TEXTS.items()])
    rag, _ = gpt(idx)
    prepared = rag.prepare("What is the capital of France?")
    assert prepared.compression is None and "compress" not in prepared.timings


def test_litm_rag_compress_on_the_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    for k, v in LONG.items():
        (folder / f"{k}.md").write_text(v, encoding="utf-8")

    def litm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "litm", *args], capture_output=True, text=True, timeout=600)

    built = litm("index", str(folder), "--out", str(tmp_path / "idx"))
    assert built.returncode == 0, built.stderr
    bad = litm("rag", str(tmp_path / "idx"), "When was Rome founded?", "--compress", "half")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "'half'" in bad.stderr
    done = litm("rag", str(tmp_path / "idx"), "When was Rome founded?", "--compress", "2x", "--model", "local:smollm2",
                "--max-tokens", "12")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "compressed " in done.stdout and "document tokens" in done.stdout


def test_auto_finds_a_profile_registered_for_the_pipelines_model(tmp_path: Path) -> None:
    from litm.placement import PositionProfile, register_profile
    from litm.placement._auto import unregister_profile

    # A profile whose best slot is the middle one: auto places rank 1 there only if it found the profile.
    with pytest.raises(InvalidProfileError, match="from_weights"):
        PositionProfile([0.1, 0.9, 0.2])  # type: ignore[list-item]
    profile = PositionProfile.from_weights([0.1, 0.9, 0.2], name="middle-best")
    register_profile("openai:gpt-4o-mini", profile)
    try:
        idx = Index.create(tmp_path / "idx", dense=False)
        idx.add_texts([{"id": k, "text": v, "source": f"{k}.txt"} for k, v in TEXTS.items()])
        rag, _ = gpt(idx)
        plan = rag.prepare("What is the capital of France?").plan
        assert len(plan.slots) == 6 and "middle-best" in (plan.note or "")
        # The profile peaks in the middle: rank 1 goes to a middle slot, not first as edges would put it.
        assert plan.slots[0].rank != 1 and plan.slots[-1].rank != 1
    finally:
        unregister_profile("openai:gpt-4o-mini")
    plain = rag.prepare("What is the capital of France?").plan
    assert plain.slots[0].rank == 1 and "edges" in (plain.note or "")
