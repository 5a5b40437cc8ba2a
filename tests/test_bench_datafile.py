"""The benchmark data-file format (valid and broken files), the bundled multi-hop sets and their sources."""

from __future__ import annotations

import gzip
import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from litm.bench._datafile import parse_record, read_records, record_dict, to_items
from litm.bench._multihop import BUNDLED, hotpotqa_records, load_records, twowiki_records
from litm.bench._sources import describe, load_bench_items
from litm.errors import DataFileError, InvalidOptionError

SHA = {
    "hotpotqa": "f764184c713165e24c511fa067f76217d2eb9ad5c87223f268a6feedf45e812b",
    "2wiki": "d9b55ffab6d62675f1840454fa87f0bcaf86af6802d08ad8d00b6bccea78ed7b",
}


def _record(**over: Any) -> dict[str, Any]:
    docs = [
        {"id": "a", "title": "Tesla", "text": "Tesla was founded by Martin Eberhard.", "gold": True, "score": 3.0},
        {"id": "b", "title": "Model 3", "text": "The Model 3 is made by Tesla.", "gold": True, "score": 9.0},
        {"id": "c", "title": "Ford", "text": "Ford makes the Model T.", "score": 5.0},
        {"id": "d", "title": "GM", "text": "GM is in Detroit.", "score": 1.0},
    ]
    return {"id": "q1", "question": "Who founded the maker of the Model 3?", "answers": ["Martin Eberhard"],
            "type": "bridge", "documents": docs} | over  # fmt: skip


def _write(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_a_valid_file_round_trips_in_retriever_order(tmp_path: Path) -> None:
    second = _record(id=7, type=None) | {"documents": [{"text": "x", "gold": True}, {"text": "y"}]}
    path = _write(tmp_path, _record(), "", second)
    first, other = read_records(path)
    assert first.order == "score" and [d.id for d in first.documents] == ["b", "c", "a", "d"]
    assert [d.id for d in first.golds] == ["b", "a"] and first.kind == "bridge"
    assert other.qid == "7" and other.order == "file" and [d.id for d in other.documents] == ["7-1", "7-2"]
    again = parse_record(record_dict(first), line=1)
    assert again.order == "rank" and again.documents == tuple(
        d.__class__(d.id, d.title, d.text, d.gold, d.score, i) for i, d in enumerate(first.documents, start=1)
    )


def test_ranks_win_over_scores() -> None:
    raw = _record()
    for rank, doc in zip([4, 3, 2, 1], raw["documents"], strict=True):
        doc["rank"] = rank
    assert [d.id for d in parse_record(raw, line=1).documents] == ["d", "c", "b", "a"]


def test_to_items_keeps_every_gold_and_the_best_distractors() -> None:
    record = parse_record(_record(), line=1)
    items, left_out = to_items([record], 3)
    (item,) = items
    assert left_out == [] and [p.pid for p in item.golds] == ["b", "a"]
    assert [p.pid for p in item.distractors] == ["c"] and item.gold_ranks == (1, 3)
    assert [p.pid for p in item.retrieved()] == ["b", "c", "a"]
    # Too few documents, or as many golds as documents: left out and named, never cut.
    assert to_items([record], 5) == ([], ["q1"])
    assert to_items([record], 2) == ([], ["q1"])


BROKEN: list[tuple[object, str]] = [
    (["not", "an", "object"], "record: expected a JSON object"),
    (_record(question="  "), "question: expected a non-empty string"),
    (_record(answers="Martin"), "answers: expected a non-empty list"),
    (_record(answers=["ok", ""]), "answers[1]: expected a non-empty string"),
    ({k: v for k, v in _record().items() if k != "answers"} | {"answer": "x"}, 'answer: use "answers"'),
    (_record(colour="red"), "colour: unknown field"),
    (_record(id=True), "id: expected a string or an integer"),
    (_record(documents=[]), "documents: expected a non-empty list"),
    (_record(documents=["text"]), "documents[0]: expected an object"),
    (_record(documents=[{"text": "x"}]), "documents: no gold document"),
    (_record(documents=[{"text": "", "gold": True}]), "documents[0].text: expected a non-empty string"),
    (_record(documents=[{"text": "x", "gold": "yes"}]), "documents[0].gold: expected true or false"),
    (_record(documents=[{"text": "x", "gold": True, "score": float("nan")}]), "documents[0].score: expected a finite"),
    (_record(documents=[{"text": "x", "gold": True, "rank": 0}]), "documents[0].rank: expected an integer >= 1"),
    (_record(documents=[{"text": "x", "gold": True, "rank": 1}, {"text": "y"}]), "documents[1].rank: missing"),
    (_record(documents=[{"text": "x", "gold": True, "rank": 1}, {"text": "y", "rank": 1}]), "ranks repeat"),
    (_record(documents=[{"id": "a", "text": "x", "gold": True}, {"id": "a", "text": "y"}]), "documents[1].id: repeats"),
    (_record(documents=[{"text": "x", "gold": True, "url": "u"}]), "documents[0].url: unknown field"),
]


@pytest.mark.parametrize(("raw", "message"), BROKEN, ids=[m.split(":")[0] for _, m in BROKEN])
def test_a_broken_record_names_the_file_line_and_field(tmp_path: Path, raw: object, message: str) -> None:
    path = _write(tmp_path, _record(id="ok"), raw)
    with pytest.raises(DataFileError) as err:
        read_records(path)
    text = str(err.value)
    assert text.startswith(f"{path}:2: ") and message in text and "\n" not in text
    assert err.value.line == 2 and isinstance(err.value, ValueError)


def test_broken_files(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no such data file"):
        read_records(tmp_path / "missing.jsonl")
    with pytest.raises(DataFileError, match=r":1: not valid JSON"):
        read_records(_write(tmp_path, "{oops"))
    with pytest.raises(DataFileError, match="no records"):
        read_records(_write(tmp_path, "", "  "))
    with pytest.raises(DataFileError, match=r":2: id: repeats the id of line 1"):
        read_records(_write(tmp_path, _record(), _record()))
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"question": "caf\xe9"}\n')
    with pytest.raises(DataFileError, match="cannot read"):
        read_records(bad)


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_files_are_the_attributed_extracts(name: str) -> None:
    raw = gzip.decompress((resources.files("litm") / "data" / BUNDLED[name][0]).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == SHA[name]
    licences = {p.name for p in (resources.files("litm") / "data" / "licenses").iterdir()}
    assert {"HotpotQA-CC-BY-SA-4.0.txt", "2WikiMultihopQA-Apache-2.0.txt"} <= licences


def test_hotpotqa_records() -> None:
    records = hotpotqa_records()
    assert len(records) == 103
    assert sum(r.kind == "bridge" for r in records) == 82 and sum(r.kind == "comparison" for r in records) == 21
    assert all(len(r.golds) == 2 for r in records)
    assert sum(len(r.documents) == 10 for r in records) == 102  # one row ships only its 2 gold paragraphs
    first = records[0]
    assert first.question.startswith("Were Scott Derrickson and Ed Wood") and first.answers == ("yes",)
    assert "Scott Derrickson" in first.golds[0].text


def test_twowiki_records() -> None:
    records = twowiki_records()
    assert len(records) == 200 and all(len(r.documents) == 10 for r in records)
    gold_counts = sorted({len(r.golds) for r in records})
    assert gold_counts == [2, 4] and sum(len(r.golds) == 4 for r in records) == 40
    kinds = {r.kind for r in records}
    assert kinds == {"compositional", "comparison", "inference", "bridge_comparison"}
    assert any(len(r.answers) > 1 for r in records)  # aliases are accepted answers


def test_load_bench_items_for_each_source(tmp_path: Path) -> None:
    items, info = load_bench_items("hotpotqa", questions=200, k=10, retriever="file")
    assert len(items) == 102 and len(info["left_out"]) == 1 and info["records"] == 103
    wiki, _ = load_bench_items("2wiki", questions=5, k=10, retriever="file")
    assert all(len(i.golds) in (2, 4) for i in wiki)
    path = _write(tmp_path, _record())
    mine, info = load_bench_items(str(path), questions=5, k=4)
    assert [p.pid for p in mine[0].retrieved()] == ["b", "c", "a", "d"] and info["left_out"] == []
    ranked, _ = load_bench_items(str(path), questions=5, k=4, retriever="bm25")
    assert ranked[0].retrieved()[0].pid in {"a", "b"}  # BM25 ranks a document that mentions "Model 3" first
    assert "as given" in describe("hotpotqa", "file") and "bm25" in describe(str(path), "bm25")
    with pytest.raises(InvalidOptionError, match="no document order of its own"):
        load_bench_items("nq", questions=1, k=10, retriever="file")
    with pytest.raises(InvalidOptionError, match="unknown retriever"):
        load_bench_items("hotpotqa", questions=1, k=10, retriever="tfidf")
    with pytest.raises(InvalidOptionError, match="unknown bundled data set"):
        load_records("musique")


def test_the_documented_example_file_parses() -> None:
    path = Path(__file__).resolve().parents[1] / "docs" / "bench-data-example.jsonl"
    tesla, eiffel = read_records(path)
    assert len(tesla.golds) == 2 and tesla.order == "score" and tesla.kind == "bridge"
    assert eiffel.order == "rank" and eiffel.documents[0].title == "Tokyo Tower" and eiffel.golds[0].rank == 2
    items, left_out = to_items([tesla, eiffel], 3)
    assert [i.gold_ranks for i in items] == [(1, 2), (2,)] and left_out == []
