"""BM25, dense and hybrid retrieval on real NQ passages with the real model; rerankers; offline operation."""

from __future__ import annotations

import math
import socket
from pathlib import Path

import numpy as np
import pytest

from litm.errors import InvalidScoreError, RetrievalError
from litm.eval._datasets import nq_rows
from litm.placement import PlacementOptions, place
from litm.retrieve import (
    BM25,
    CrossEncoderReranker,
    Dense,
    Hit,
    Hybrid,
    Index,
    Reranked,
    Retriever,
    build_index,
    search,
)
from litm.retrieve._embedder import MiniLM
from litm.retrieve._hits import docs
from litm.retrieve._hybrid import RRF_K
from litm.retrieve._rerank import DenseReranker
from litm.retrieve._retrievers import make_retriever

N = 80  # passages (and their questions): enough to rank retrievers, small enough to embed in seconds


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return MiniLM()


@pytest.fixture(scope="module")
def nq(tmp_path_factory: pytest.TempPathFactory, model: MiniLM) -> tuple[Index, list[tuple[str, str]]]:
    rows = nq_rows()[:N]
    index = Index.create(tmp_path_factory.mktemp("nq") / "index", embedder=model)
    index.add_texts(
        {"id": f"p{i}", "title": r["ctxs"][0]["title"], "text": r["ctxs"][0]["text"]} for i, r in enumerate(rows)
    )
    return index, [(r["question"], f"p{i}") for i, r in enumerate(rows)]


def recall(retriever: Retriever, questions: list[tuple[str, str]], ks: tuple[int, ...]) -> list[float]:
    """Recall@k for each k: the share of questions whose gold passage is among the first k hits."""
    found = [0] * len(ks)
    for question, gold in questions:
        keys = [h.chunk.key for h in retriever.search(question, max(ks))]
        for i, k in enumerate(ks):
            found[i] += gold in keys[:k]
    return [f / len(questions) for f in found]


def test_passages_longer_than_the_model_window_are_split(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, _ = nq
    assert len(index.keys) == N < len(index) < N + 10  # a few NQ passages pass 256 word pieces
    assert all(c.tokens <= 256 for c in index.chunks)
    assert {c.key for c in index.chunks if not c.id.endswith("#0")} <= {c.key for c in index.chunks}


@pytest.mark.parametrize(("kind", "r1", "r5"), [("bm25", 0.80, 0.92), ("dense", 0.88, 0.95), ("hybrid", 0.85, 0.95)])
def test_known_item_recall(nq: tuple[Index, list[tuple[str, str]]], kind: str, r1: float, r5: float) -> None:
    # Each question against all N passages; its own gold passage should come first. Bars sit below what
    # these retrievers reach here (the benchmark has the full numbers), far above what a broken one would.
    index, questions = nq
    at1, at5 = recall(make_retriever(index, kind), questions, (1, 5))
    assert at1 >= r1 and at5 >= r5, (at1, at5)


def test_hits_are_ranked_scored_and_directed(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, questions = nq
    for retriever in (BM25(index), Dense(index), make_retriever(index, "hybrid")):
        hits = retriever.search(questions[0][0], k=7)
        assert [h.rank for h in hits] == list(range(1, 8))
        assert all(h.higher_is_better and h.retriever == retriever.name for h in hits)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        doc = hits[0].doc
        assert doc.id == hits[0].chunk.id and doc.score == hits[0].score
        assert doc.metadata["higher_is_better"] is True and doc.metadata["rank"] == 1


def test_hits_feed_placement(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, questions = nq
    hits = Dense(index).search(questions[3][0], k=5)
    options = PlacementOptions("edges", rank_by="score", higher_is_better=hits[0].higher_is_better)
    plan = place(docs(hits), placement=options)
    ids = [d.id for d in plan.items]
    best = hits[0].chunk.id
    assert ids[0] == best and ids[-1] == hits[1].chunk.id  # the two best at the edges


def test_dense_scores_are_cosines_of_the_query(nq: tuple[Index, list[tuple[str, str]]], model: MiniLM) -> None:
    index, questions = nq
    query = questions[5][0]
    hits = Dense(index).search(query, k=len(index))
    q = model.embed([query])[0]
    expected = index.vectors @ q
    for hit in hits:
        assert math.isclose(hit.score, float(expected[index.row(hit.chunk.id)]), abs_tol=1e-5)
    assert len(hits) == len(index)


def test_faiss_and_numpy_backends_agree(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, questions = nq
    exact, faiss = Dense(index), Dense(index, backend="faiss")
    for q, _ in questions[:10]:
        a, b = exact.search(q, 10), faiss.search(q, 10)
        assert [h.chunk.id for h in a] == [h.chunk.id for h in b]
        np.testing.assert_allclose([h.score for h in a], [h.score for h in b], atol=1e-5)
    assert len(faiss.search("anything", 500)) == len(index)


def test_hybrid_is_reciprocal_rank_fusion(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, questions = nq
    bm25, dense = BM25(index), Dense(index)
    query = questions[7][0]
    expected: dict[str, float] = {}
    for hits in (bm25.search(query, 100), dense.search(query, 100)):
        for h in hits:
            expected[h.chunk.id] = expected.get(h.chunk.id, 0.0) + 1 / (RRF_K + h.rank)
    fused = Hybrid([bm25, dense]).search(query, k=10)
    assert [h.chunk.id for h in fused] == sorted(expected, key=lambda c: -expected[c])[:10]
    assert all(math.isclose(h.score, expected[h.chunk.id]) for h in fused)


def test_bm25_returns_only_chunks_sharing_a_term(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, _ = nq
    bm25 = BM25(index)
    assert bm25.search("the of and is", k=5) == []  # stopwords only
    hits = bm25.search("Röntgen", k=50)
    assert 1 <= len(hits) < 50 and all(h.score > 0 for h in hits)
    assert all("röntgen" in h.chunk.text.lower() for h in hits)


def test_retrievers_follow_index_updates(tmp_path: Path, model: MiniLM) -> None:
    index = Index.create(tmp_path / "i", embedder=model)
    index.add_texts(["Volcanoes erupt lava.", "Glaciers move slowly."])
    bm25, dense = BM25(index), Dense(index)
    assert bm25.search("penguins") == [] and dense.search("penguins", 1)[0].chunk.text != "Penguins live in Antarctica."
    index.add_texts([{"id": "peng", "text": "Penguins live in Antarctica."}])
    assert bm25.search("penguins")[0].chunk.id == "peng#0"
    assert dense.search("Where do penguins live?", 1)[0].chunk.id == "peng#0"


def test_dense_reranker_uses_stored_vectors_and_embeds_strangers(
    nq: tuple[Index, list[tuple[str, str]]], model: MiniLM
) -> None:
    index, questions = nq
    query = questions[11][0]
    candidates = BM25(index).search(query, 20)
    reranked = DenseReranker(index).rerank(query, candidates)
    q = model.embed([query])[0]
    assert sorted(h.chunk.id for h in reranked) == sorted(h.chunk.id for h in candidates)
    for hit in reranked:
        assert math.isclose(hit.score, float(index.vectors[index.row(hit.chunk.id)] @ q), abs_tol=1e-5)
        assert hit.retriever == "bm25+dense-rerank"
    # The same ranking as dense retrieval restricted to the candidates.
    dense_order = [h.chunk.id for h in Dense(index).search(query, N) if h.chunk.id in {c.chunk.id for c in candidates}]
    assert [h.chunk.id for h in reranked] == dense_order
    # A hit from elsewhere (not in this index) is embedded from its text.
    stranger = Hit(
        candidates[0].chunk.__class__(
            id="x#0", key="x", source="x", title=None, text=index.chunks[0].text, start=0, end=1, tokens=1,
            prefix=index.chunks[0].prefix,
        ),
        1.0, True, 1, "other",
    )
    [alone] = DenseReranker(index).rerank(query, [stranger])
    assert math.isclose(alone.score, float(index.vectors[0] @ q), abs_tol=1e-5)


def test_cross_encoder_adapter_with_a_local_model(nq: tuple[Index, list[tuple[str, str]]], model: MiniLM) -> None:
    index, questions = nq

    def cosine(query: str, texts: list[str]) -> list[float]:  # a real local scorer: the MiniLM bi-encoder
        return [float(v) for v in model.embed(texts) @ model.embed([query])[0]]

    def distance(query: str, texts: list[str]) -> list[float]:
        return [1.0 - s for s in cosine(query, texts)]

    query, gold = questions[2]
    by_similarity = Reranked(BM25(index), CrossEncoderReranker(cosine), candidates=12).search(query, k=5)
    by_distance = Reranked(
        BM25(index), CrossEncoderReranker(distance, higher_is_better=False, batch_size=5), candidates=12
    ).search(query, k=5)
    assert [h.chunk.id for h in by_similarity] == [h.chunk.id for h in by_distance]
    assert by_distance[0].higher_is_better is False
    assert [h.score for h in by_distance] == sorted(h.score for h in by_distance)  # distances, ascending
    assert by_similarity[0].chunk.key == gold


def test_cross_encoder_output_is_checked(nq: tuple[Index, list[tuple[str, str]]]) -> None:
    index, questions = nq
    hits = BM25(index).search(questions[0][0], 5)
    with pytest.raises(RetrievalError, match="returned 1 scores for 5 texts"):
        CrossEncoderReranker(lambda q, texts: [0.0]).rerank("q", hits)
    with pytest.raises(InvalidScoreError):
        CrossEncoderReranker(lambda q, texts: [float("nan")] * len(texts)).rerank("q", hits)


def test_bad_requests_are_typed_errors(nq: tuple[Index, list[tuple[str, str]]], tmp_path: Path) -> None:
    index, _ = nq
    for k in (0, -1, True):
        with pytest.raises(RetrievalError, match="k must be"):
            BM25(index).search("x", k)  # type: ignore[arg-type]
    with pytest.raises(RetrievalError, match="unknown retriever"):
        make_retriever(index, "splade")
    with pytest.raises(RetrievalError, match="unknown vector backend"):
        Dense(index, backend="annoy")
    lexical = Index.create(tmp_path / "lex", dense=False)
    with pytest.raises(RetrievalError, match="no dense vectors"):
        Dense(lexical)
    assert make_retriever(lexical).name == "bm25" and make_retriever(index).name == "hybrid"


CJK_DOCS = [
    {"id": "generators", "text": "生成器是Python的高级特性之一。它按需产生数据。节省内存。"},
    {"id": "decorators", "text": "装饰器也是Python高级特性。可以在不修改函数的情况下扩展功能。"},
    {"id": "lists", "text": "列表是Python最基本的数据结构。可以存放任意对象。"},
    {"id": "install", "text": "安装Python时请选择添加到PATH环境变量。"},
    {"id": "java", "text": "Java是一种静态类型的编程语言。"},
    {"id": "coffee", "text": "咖啡馆早上八点开门。"},
]


def test_bm25_finds_chinese_text(tmp_path: Path) -> None:
    index = Index.create(tmp_path / "zh", dense=False)
    index.add_texts(CJK_DOCS)
    top = [h.chunk.key for h in BM25(index).search("Python高级特性", k=3)]
    assert set(top[:2]) == {"generators", "decorators"}


def test_nothing_touches_the_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    for name in ("connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# Keys\n\nRotate keys every 90 days.")
    (folder / "b.txt").write_text("Lunch is served until 2pm.")
    index, _ = build_index(folder, tmp_path / "index")  # a fresh model and tokenizer load, no embedder passed
    for kind in ("bm25", "dense", "hybrid"):
        assert search(index.path, "when should keys be rotated", k=1, retriever=kind)[0].chunk.source == "a.md"
    assert search(index.path, "keys", retriever="dense", rerank="dense", k=1)[0].chunk.source == "a.md"
