"""Coercion of the document shapes users hold, read by duck typing, tested on the real framework objects."""

from __future__ import annotations

from typing import Any

import pytest
from haystack import Document as HaystackDocument
from langchain_core.documents import Document as LCDocument
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core.schema import NodeWithScore, TextNode

import litm
from litm.errors import InvalidDocumentError
from litm.placement import PlacementOptions
from litm.placement._documents import Doc, to_doc


def test_str_and_dict() -> None:
    assert to_doc("hello", index=0) == Doc(text="hello", id="doc-1")
    d = to_doc({"id": 7, "content": "x", "score": 2, "title": "T", "source": "s", "lang": "en"})
    assert (d.id, d.text, d.score, d.title, d.source) == ("7", "x", 2.0, "T", "s")
    assert d.metadata == {"lang": "en"}  # unknown keys are kept, not lost


def test_langchain_document() -> None:
    lc = LCDocument(page_content="body", metadata={"source": "wiki", "score": 0.5, "title": "Page"}, id="lc1")
    d = to_doc(lc)
    assert (d.id, d.text, d.score, d.source, d.title) == ("lc1", "body", 0.5, "wiki", "Page")


def test_llamaindex_node_with_score_and_bare_node() -> None:
    node = TextNode(text="node text", id_="n-1", metadata={"file_name": "a.md"})
    d = to_doc(NodeWithScore(node=node, score=0.75))
    assert (d.id, d.text, d.score, d.source) == ("n-1", "node text", 0.75, "a.md")
    # A bare node (from a node parser or a docstore) has no score.
    bare = to_doc(node)
    assert (bare.id, bare.text, bare.score, bare.source) == ("n-1", "node text", None, "a.md")
    assert to_doc(NodeWithScore(node=node, score=None)).score is None


def test_haystack_document() -> None:
    d = to_doc(HaystackDocument(content="hay", id="h1", score=0.3, meta={"title": "H", "file_path": "f.txt"}))
    assert (d.id, d.text, d.score, d.title, d.source) == ("h1", "hay", 0.3, "H", "f.txt")
    # Haystack derives an id from the content when none is given; litm keeps it.
    auto = HaystackDocument(content="no id given")
    assert to_doc(auto).id == auto.id
    with pytest.raises(litm.InvalidDocumentError, match="item 4: text must be str, got NoneType") as err:
        to_doc(HaystackDocument(content=None, id="h2"), index=4)
    assert err.value.field == "text" and err.value.index == 4


def test_place_hands_back_the_callers_objects() -> None:
    objs = [HaystackDocument(content=f"t{i}", id=f"h{i}", score=float(i)) for i in range(6)]
    snapshot = list(objs)
    plan = litm.place(objs, "pyramid", rank_by="score")
    assert objs == snapshot
    assert all(any(p is o for o in objs) for p in plan.items)
    assert [p.id for p in plan.items] == ["h4", "h2", "h0", "h1", "h3", "h5"]


def test_place_mixes_framework_objects() -> None:
    items: list[Any] = [
        LCDocument(page_content="lc", id="a"),
        NodeWithScore(node=TextNode(text="li", id_="b")),
        TextNode(text="node", id_="c"),
        HaystackDocument(content="hs", id="d"),
        "plain",
    ]
    plan = litm.place(items, "none")
    assert [d.id for d in plan.docs] == ["a", "b", "c", "d", "doc-5"]
    assert plan.items == tuple(items)


def test_score_pairs_from_a_real_vector_store() -> None:
    # similarity_search_with_score() returns (Document, score) pairs; InMemoryVectorStore's score is a cosine
    # similarity (higher is better), where FAISS and Chroma return a distance (pass higher_is_better=False).
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([LCDocument(page_content=f"passage {i}", id=f"p{i}") for i in range(6)])
    pairs = store.similarity_search_with_score("passage 2", k=6)
    plan = litm.place(pairs, rank_by="score")
    assert plan.items[0] is next(p for p in pairs if p[0].id == "p2")  # auto without a profile (edges): best first
    best_first = sorted(pairs, key=lambda p: -p[1])
    assert [s.doc.id for s in sorted(plan.slots, key=lambda s: s.rank)] == [p[0].id for p in best_first]
    assert plan.items[-1] is best_first[1]  # and the second best last
    assert plan.slots[0].relevance == 1.0 and min(s.relevance or 0.0 for s in plan.slots) == 0.0


def test_pairs_of_any_document_and_distances() -> None:
    pairs = [("far", 0.9), ({"id": "n", "text": "near", "score": 7.0}, 0.1), (Doc(text="mid", id="m"), 0.4)]
    docs = [to_doc(p, index=i) for i, p in enumerate(pairs)]
    assert [(d.id, d.text, d.score) for d in docs] == [("doc-1", "far", 0.9), ("n", "near", 0.1), ("m", "mid", 0.4)]
    plan = litm.place(pairs, "none", rank_by="score", placement=PlacementOptions(higher_is_better=False))
    assert [s.doc.text for s in plan.slots] == ["near", "mid", "far"]
    assert plan.items == (pairs[1], pairs[2], pairs[0])
    assert [s.relevance for s in plan.slots] == [1.0, 0.625, 0.0]
    assert to_doc((LCDocument(page_content="x"), None)).score is None


@pytest.mark.parametrize(
    ("pair", "error", "fragment"),
    [
        (("a", "b", 1.0), InvalidDocumentError, r"item 0: a tuple must be a \(document, score\) pair, got 3"),
        ((("a", 1.0), 1.0), InvalidDocumentError, "must be a .document, score. pair"),
        (("a", "0.5"), litm.InvalidScoreError, r"item 0 \(the pair's score\): score must be a number, got str"),
        (("a", float("nan")), litm.InvalidScoreError, "score is nan"),
        ((None, 0.5), InvalidDocumentError, "item 0 is None"),
    ],
)
def test_bad_pairs(pair: tuple[Any, ...], error: type[Exception], fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        to_doc(pair, index=0)


@pytest.mark.parametrize(
    ("kwargs", "field", "fragment"),
    [
        ({"text": "t", "id": None}, "id", "document: id must be str, got NoneType"),
        ({"text": "t", "id": 3}, "id", "id must be str, got int"),
        ({"text": b"t", "id": "a"}, "text", "document 'a': text must be str, got bytes"),
        ({"text": "t", "id": "a", "title": 5}, "title", "title must be str or None, got int"),
        ({"text": "t", "id": "a", "source": ["x"]}, "source", "source must be str or None, got list"),
        ({"text": "t", "id": "a", "metadata": [("k", 1)]}, "metadata", "metadata must be a mapping, got list"),
    ],
)
def test_doc_fields_are_validated_with_a_typed_error(kwargs: dict[str, Any], field: str, fragment: str) -> None:
    with pytest.raises(InvalidDocumentError, match=fragment) as err:
        Doc(**kwargs)
    assert err.value.field == field
    assert isinstance(err.value, TypeError) and isinstance(err.value, litm.LitmError)


def test_doc_score_is_validated() -> None:
    with pytest.raises(litm.InvalidScoreError, match="document 'a': score is inf"):
        Doc(text="t", id="a", score=float("inf"))
    assert Doc(text="t", id="a", score=1).score == 1.0


def test_doc_is_a_hashable_value() -> None:
    a = Doc(text="t", id="a", score=0.5, metadata={"k": [1, 2]})
    b = Doc(text="t", id="a", score=0.5, metadata={"k": [1, 2]})
    assert a == b and hash(a) == hash(b)
    assert a != Doc(text="t", id="a", score=0.5, metadata={"k": [1]})


def test_unreadable_object_names_its_type_and_index() -> None:
    with pytest.raises(litm.InvalidDocumentError, match=r"item 2: cannot read a int"):
        litm.place(["a", "b", 3], "edges")
