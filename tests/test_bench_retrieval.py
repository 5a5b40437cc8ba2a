"""litm.bench ranks documents with the real retrievers (BM25, dense MiniLM, hybrid), not a fixed order."""

from __future__ import annotations

from pathlib import Path

import pytest

from litm.bench._retrieval import RETRIEVERS, searcher
from litm.errors import InvalidOptionError

DOCS = [
    ("q1-gold", "Marie Curie", "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911."),
    ("q1-d1", "Paris", "Paris is the capital and most populous city of France."),
    ("q1-d2", "Cats", "The domestic cat is a small carnivorous mammal that sleeps much of the day."),
    # The same passage under another question's key: indexed once, ranked for both keys.
    ("q2-gold", "Marie Curie", "Marie Curie won the Nobel Prize in Physics in 1903 and in Chemistry in 1911."),
    ("q2-d1", "Volcanoes", "A volcano is a rupture in the crust of a planet that lets lava escape."),
]


@pytest.mark.parametrize("retriever", RETRIEVERS)
def test_each_retriever_ranks_the_answering_passage_first(tmp_path: Path, retriever: str) -> None:
    search = searcher(retriever, DOCS, tmp_path / retriever)
    hits = search("Which scientist received two Nobel prizes, in physics and chemistry?", 3)
    keys = [key for key, _ in hits]
    assert set(keys[:2]) == {"q1-gold", "q2-gold"}  # one passage, both of its owners, best first
    assert len(keys) == len(set(keys)) <= 3  # BM25 returns only passages sharing a term with the query
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)


def test_a_second_searcher_reuses_the_index_on_disk(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    first = searcher("bm25", DOCS, folder)("capital of France", 1)
    files = sorted((p.name, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file())
    again = searcher("bm25", DOCS, folder)("capital of France", 1)
    assert first == again == [("q1-d1", pytest.approx(first[0][1]))]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()) == files


def test_an_unknown_retriever_is_a_typed_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidOptionError, match="unknown retriever 'tfidf'"):
        searcher("tfidf", DOCS, tmp_path)
